import { z } from 'zod';
import { Currency, MinorUnits } from '../primitives';

/** A charge in the PSP simulator's test ledger. */
export const LedgerCharge = z.object({
  id: z.string().min(1),
  amount: MinorUnits.positive(),
  currency: Currency,
  reference: z.string(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  amountRefunded: MinorUnits,
  refunded: z.boolean(),
  idempotencyKey: z.string(),
});

/** A refund in the PSP simulator's test ledger. */
export const LedgerRefund = z.object({
  id: z.string().min(1),
  charge: z.string(),
  reference: z.string(),
  amount: MinorUnits.positive(),
  currency: Currency,
  status: z.literal('succeeded'),
  idempotencyKey: z.string(),
});

/** The PSP simulator's test ledger, `GET /v1/_ledger?reference=<orderId>`: what it charged, refunded and sent. */
export const LedgerView = z.object({
  charges: z.array(LedgerCharge),
  refunds: z.array(LedgerRefund),
  events: z.array(
    z.object({
      id: z.string(),
      type: z.string().regex(/^(charge|refund)\.[a-z_]+$/),
      data: z.object({ object: z.looseObject({ id: z.string(), reference: z.string() }) }),
    }),
  ),
  deliveries: z.array(
    z.object({
      eventId: z.string(),
      type: z.string(),
      reference: z.string(),
      status: z.number().int().nullable(),
      error: z.string().nullable(),
    }),
  ),
});
export type LedgerView = z.infer<typeof LedgerView>;
