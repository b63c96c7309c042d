import { z } from 'zod';
import { CheckoutApi, SERVICE_URLS, expectBody, request } from '@checkout/e2e';

/** The PSP simulator's knobs (apps/psp-simulator, PUT /v1/_admin/knobs). */
export interface StormKnobs {
  latencyMs?: number;
  jitterMs?: number;
  errorRate?: number;
  errorMode?: 'before' | 'after';
  hangRate?: number;
  lostResponseRate?: number;
  webhookCopies?: number;
  webhookShuffleMs?: number;
  badSignatureRate?: number;
  staleTimestampRate?: number;
}

/** Issue 18's storm: 30% hang, 10% 5xx, 5% answer lost; webhooks x3, shuffled, 10% forged, 5% replayed. */
export const STORM: StormKnobs = {
  hangRate: 0.3,
  errorRate: 0.1,
  errorMode: 'before',
  lostResponseRate: 0.05,
  webhookCopies: 3,
  webhookShuffleMs: 2_000,
  badSignatureRate: 0.1,
  staleTimestampRate: 0.05,
};

/** The knobs as they were before the storm, with every storm knob off (webhooks of the storm may still arrive). */
export const calmAfter = (before: StormKnobs): StormKnobs => ({
  ...before,
  hangRate: 0,
  errorRate: 0,
  lostResponseRate: 0,
  webhookCopies: 1,
  webhookShuffleMs: 0,
  badSignatureRate: 0,
  staleTimestampRate: 0,
});

const Knobs = z.looseObject({ errorRate: z.number(), hangRate: z.number() });

/** The deliveries of an order's webhooks, with the storm's `forged` mark (the e2e ledger view drops it). */
const Deliveries = z.looseObject({
  deliveries: z.array(
    z.object({
      eventId: z.string(),
      status: z.number().int().nullable(),
      forged: z.enum(['bad-signature', 'stale-timestamp']).optional(),
    }),
  ),
});

/** Sets the simulator's knobs; returns them as they were before. */
export async function setKnobs(knobs: StormKnobs): Promise<StormKnobs> {
  const before = expectBody(
    'GET knobs',
    await request('GET', `${SERVICE_URLS.psp}/v1/_admin/knobs`),
    200,
    Knobs,
  );
  expectBody(
    'PUT knobs',
    await request('PUT', `${SERVICE_URLS.psp}/v1/_admin/knobs`, { body: knobs }),
    200,
    Knobs,
  );
  return before as StormKnobs;
}

/**
 * A PSP storm as a fault: `inject` turns the storm knobs on, `restore` brings back the weather before it (storm
 * knobs off). The shape of the chaos runner's `Fault`.
 */
export function pspStorm(knobs: StormKnobs = STORM): {
  name: string;
  inject(): Promise<void>;
  restore(): Promise<void>;
} {
  let before: StormKnobs | undefined;
  return {
    name: 'PSP storm (hang 30%, 5xx 10%, lost answer 5%, webhooks x3 shuffled, 10% forged, 5% replayed)',
    async inject() {
      before = await setKnobs(knobs);
    },
    async restore() {
      if (before) await setKnobs(calmAfter(before));
    },
  };
}

/** What the storm left behind, per run: the figures of the table and one line per broken promise. */
export interface StormFindings {
  figures: {
    forgedWebhooks: number;
    forgedAccepted: number;
    forgedUndelivered: number;
    wronglyCancelled: number;
    settledByReconciliation: number;
    unknownPayments: number;
  };
  problems: string[];
}

/**
 * Issue 18 scenario 3's own checks, once every saga of the run ended: every forged or replayed webhook delivery
 * was refused with a 401 (the simulator marks them `forged` in its ledger), no order is CANCELLED while the PSP
 * kept its money; and how many payments reconciliation settled or saw as `unknown`.
 */
export async function stormFindings(api: CheckoutApi, orderIds: readonly string[]): Promise<StormFindings> {
  const figures = {
    forgedWebhooks: 0,
    forgedAccepted: 0,
    forgedUndelivered: 0,
    wronglyCancelled: 0,
    settledByReconciliation: 0,
    unknownPayments: 0,
  };
  const problems: string[] = [];
  for (const id of orderIds) {
    const [ledger, order, payments, raw] = await Promise.all([
      api.ledger(id),
      api.order(id),
      api.payments(id),
      request('GET', `${SERVICE_URLS.psp}/v1/_ledger?reference=${id}`),
    ]);
    const bad = expectBody(`ledger of ${id}`, raw, 200, Deliveries).deliveries.filter((d) => d.forged);
    figures.forgedWebhooks += bad.length;
    for (const d of bad) {
      // No answer (the receiver was too busy, the simulator gave up) refused nothing, but accepted nothing either.
      if (d.status === null) figures.forgedUndelivered += 1;
      else if (d.status !== 401) {
        figures.forgedAccepted += 1;
        problems.push(`forged webhook (${d.forged}) for ${id} answered ${d.status}, not 401`);
      }
    }
    const kept = ledger.charges.filter((c) => c.status === 'succeeded' && !c.refunded).length;
    if (order.status === 'CANCELLED' && kept > 0) {
      figures.wronglyCancelled += 1;
      problems.push(`order ${id} CANCELLED while the PSP kept its money`);
    }
    if (payments.some((p) => p.history.some((h) => h.source === 'reconciliation')))
      figures.settledByReconciliation += 1;
    if (payments.some((p) => p.history.some((h) => h.to === 'unknown'))) figures.unknownPayments += 1;
  }
  return { figures, problems };
}
