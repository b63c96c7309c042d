import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { OutboxWriter } from '@checkout/messaging';
import { OUTBOX_WRITER } from '@checkout/service-kit';
import { ReleasedRow, releaseHeld } from '../../database/stock.repository';
import { publishReleased } from '../release-stock/release-stock.handler';

/** Input of ExpireReservationsHandler: one tenant, optionally a few SKUs, at most `limit` rows per run. */
export interface ExpireReservationsInput {
  tenantId: string;
  skus?: string[];
  limit?: number;
}

/**
 * ExpireReservationsHandler: releases held reservations past their TTL with the one-statement CTE and writes
 * inventory.released (reason expired) in the same transaction. Two instances at once, or a retry, never
 * return stock twice: rows another run holds are skipped, rows already released no longer match.
 */
@Injectable()
export class ExpireReservationsHandler {
  constructor(@Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter) {}

  async execute(
    tx: EntityManager,
    { tenantId, skus, limit = 500 }: ExpireReservationsInput,
  ): Promise<ReleasedRow[]> {
    const rows = await releaseHeld(tx, {
      tenantId,
      skus,
      limit,
      reason: 'expired',
      onlyExpired: true,
      skipLocked: true,
    });
    await publishReleased(this.outbox, tx, rows, 'expired');
    return rows;
  }
}
