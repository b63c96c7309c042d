import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { z } from 'zod';
import { isUuid } from '../../database/payment.repository';
import { PaymentMetrics } from '../../payment.metrics';
import { MovePaymentHandler } from '../move-payment/move-payment.handler';

/** A PSP webhook event as we accept it. */
export const PspEventSchema = z.object({
  id: z.string().min(1).max(128),
  type: z.string().min(1).max(64),
  created: z.number().int().min(0),
  account: z.string().min(1).max(128),
  data: z.object({
    object: z.object({
      id: z.string().min(1).max(128),
      reference: z.string().min(1).max(128),
      status: z.enum(['pending', 'succeeded', 'failed']),
      failureCode: z.string().max(128).nullable().optional(),
      metadata: z.record(z.string(), z.string()).default({}),
    }),
  }),
});
export type PspEvent = z.infer<typeof PspEventSchema>;

/** What one webhook delivery did. */
export type PspEventOutcome = 'applied' | 'ignored' | 'duplicate' | 'unmatched';

/**
 * ApplyPspEvent: in one transaction, record the PSP event id (a redelivery stops here) and move the tenant's
 * payment as the event says; the state machine ignores anything stale (a `failed` after `succeeded`).
 */
@Injectable()
export class ApplyPspEventHandler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly move: MovePaymentHandler,
    private readonly metrics: PaymentMetrics,
  ) {}

  async execute(tenantId: string, event: PspEvent): Promise<PspEventOutcome> {
    const outcome = await this.dataSource.transaction(async (tx): Promise<PspEventOutcome> => {
      const charge = event.data.object;
      const fresh: unknown[] = await tx.query(
        `INSERT INTO psp_event (event_id, tenant_id, type, charge_id, outcome) VALUES ($1, $2, $3, $4, 'received')
         ON CONFLICT DO NOTHING RETURNING 1`,
        [event.id, tenantId, event.type, charge.id],
      );
      if (fresh.length === 0) return 'duplicate';
      // The tenant comes from the verified signature: another tenant's payment is never found here.
      const paymentId = isUuid(charge.metadata.paymentId) ? charge.metadata.paymentId : null;
      const rows: { id: string }[] = await tx.query(
        `SELECT id FROM payment_attempt WHERE tenant_id = $1 AND (id = $2::uuid OR psp_ref = $3) LIMIT 1`,
        [tenantId, paymentId, charge.id],
      );
      let result: PspEventOutcome = 'unmatched';
      const target = rows[0]?.id ?? null;
      if (target && (event.type === 'charge.succeeded' || event.type === 'charge.failed')) {
        const moved = await this.move.execute(tx, {
          paymentId: target,
          tenantId,
          to: event.type === 'charge.succeeded' ? 'succeeded' : 'failed',
          source: 'webhook',
          pspRef: charge.id,
          failureReason: event.type === 'charge.failed' ? (charge.failureCode ?? 'declined') : null,
          pspEventId: event.id,
        });
        result = moved.outcome;
      } else if (target) result = 'ignored';
      await tx.query(`UPDATE psp_event SET outcome = $2, payment_id = $3 WHERE event_id = $1`, [
        event.id,
        result,
        target,
      ]);
      return result;
    });
    this.metrics.webhooks.inc({ outcome });
    return outcome;
  }
}
