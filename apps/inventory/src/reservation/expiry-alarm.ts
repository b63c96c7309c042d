import { Injectable } from '@nestjs/common';

/**
 * Tells the expiry job when reservations this process just held fall due, so that it sleeps until then instead
 * of looking every interval (the writer and the job live in one process; the job's interval still catches what
 * another replica held).
 */
@Injectable()
export class ReservationExpiryAlarm {
  private listener?: (at: Date) => void;

  /** Reservations held until `at` were written (in a transaction about to commit). */
  heldUntil(at: Date): void {
    this.listener?.(at);
  }

  /** The expiry job's ear; one listener. */
  listen(listener: (at: Date) => void): void {
    this.listener = listener;
  }
}
