import { z } from 'zod';
import { CheckoutApi, SERVICE_URLS, expectBody, request } from '@checkout/e2e';
import { TopicReader, waitFor } from '@checkout/testing';
import {
  ScenarioResult,
  Placed,
  ScenarioStack,
  conservation,
  freshSkus,
  lostEvents,
  placeCheckouts,
  refusals,
  resultRow,
  waitTerminal,
} from '../harness';

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

/** Settings of a run; the defaults are the chaos run's, the CI spec passes smaller ones. */
export interface PspStormOptions {
  checkouts?: number;
  perSecond?: number;
  knobs?: StormKnobs;
  recoverWithinMs?: number;
}

/**
 * Issue 18, scenario 3: checkouts with a mix of tokens through a PSP in a storm (charges hanging past the
 * payment service's timeout, 5xx, answers lost; every webhook three times, shuffled, some forged, some
 * replayed). Then: every saga ended, no order charged twice, no order cancelled while its money was kept, every
 * forged or replayed delivery refused (and without effect: the conservation checker finds the money of each
 * order where its status says), reconciliation settled what the webhooks did not.
 */
export async function run(_stack: ScenarioStack, options: PspStormOptions = {}): Promise<ScenarioResult> {
  const { checkouts = 300, perSecond = 5, knobs = STORM, recoverWithinMs = 240_000 } = options;
  const api = new CheckoutApi('acme');
  const reader = await new TopicReader(['order.created', 'order.paid']).start();
  const mix = {
    skus: await freshSkus(api, 'PSPSTORM', 4, checkouts),
    tokens: ['tok_success', 'tok_success', 'tok_success', 'tok_decline', 'tok_3ds'],
  };
  const calm = await setKnobs(knobs);
  let placed: Placed = { orderIds: [], refused: {}, unresolved: 0, retries: 0 };
  let faultEndedAt = Date.now();
  try {
    placed = await placeCheckouts(api, mix, checkouts, { perSecond });
    const { orderIds } = placed;
    // The storm lasts until every order's charge has been asked for (or a minute): the charges happen in it.
    await waitFor(
      'every order charged at least once',
      async () => {
        for (const id of orderIds) {
          const payments = await api.payments(id).catch(() => []);
          if (!payments.some((p) => p.chargeRequests > 0)) return false;
        }
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    ).catch(() => undefined);
  } finally {
    // Then calm weather, in which the sagas recover (webhooks of the storm still under way).
    await setKnobs({
      ...calm,
      hangRate: 0,
      lostResponseRate: 0,
      webhookCopies: 1,
      webhookShuffleMs: 0,
      badSignatureRate: 0,
      staleTimestampRate: 0,
    });
    faultEndedAt = Date.now();
  }
  const { orderIds, refused, unresolved } = placed;
  try {
    const lastTerminalAt = await waitTerminal(api, orderIds, recoverWithinMs);
    const verdict = await conservation(api, mix, orderIds);
    const extra: string[] = [];
    if (unresolved > 0) extra.push(`${unresolved} checkouts never got an answer the client could act on`);
    let forged = 0;
    let forgedAccepted = 0;
    let forgedUndelivered = 0;
    let wronglyCancelled = 0;
    let settledByReconciliation = 0;
    let unknownPayments = 0;
    for (const id of orderIds) {
      const [ledger, order, payments, raw] = await Promise.all([
        api.ledger(id),
        api.order(id),
        api.payments(id),
        request('GET', `${SERVICE_URLS.psp}/v1/_ledger?reference=${id}`),
      ]);
      const bad = expectBody(`ledger of ${id}`, raw, 200, Deliveries).deliveries.filter((d) => d.forged);
      forged += bad.length;
      for (const d of bad) {
        // No answer (the receiver was too busy, the simulator gave up) refused nothing, but accepted nothing either.
        if (d.status === null) forgedUndelivered += 1;
        else if (d.status !== 401) {
          forgedAccepted += 1;
          extra.push(`forged webhook (${d.forged}) for ${id} answered ${d.status}, not 401`);
        }
      }
      const kept = ledger.charges.filter((c) => c.status === 'succeeded' && !c.refunded).length;
      if (order.status === 'CANCELLED' && kept > 0) {
        wronglyCancelled += 1;
        extra.push(`order ${id} CANCELLED while the PSP kept its money`);
      }
      if (payments.some((p) => p.history.some((h) => h.source === 'reconciliation')))
        settledByReconciliation += 1;
      if (payments.some((p) => p.history.some((h) => h.to === 'unknown'))) unknownPayments += 1;
    }
    const lost = await lostEvents(reader, api, orderIds);
    return resultRow(
      'psp-storm',
      verdict,
      { orders: orderIds.length, lostEvents: lost, faultEndedAt, lastTerminalAt },
      {
        refused: refusals(refused),
        unresolved,
        forgedWebhooks: forged,
        forgedAccepted,
        forgedUndelivered,
        wronglyCancelled,
        settledByReconciliation,
        unknownPayments,
        successfulCharges: verdict.successfulCharges,
      },
      extra,
    );
  } finally {
    await reader.stop();
  }
}
