import { pspStorm, stormFindings } from '@checkout/faults';
import { waitFor } from '@checkout/testing';
import { ChaosContext } from '../context';
import { FaultCase } from '../fault-case';
import { Workload } from '../workload';
import { faultScenario } from './scenario';

/** How long the storm may wait, once every checkout is answered, for the last orders to be charged in it. */
const CHARGED_WITHIN_MS = 60_000;

/**
 * The storm lasts until every checkout is answered and every accepted order's charge has been asked for (or a
 * minute more): the charges happen in it. Then calm weather, in which the sagas recover.
 */
async function untilCharged(_ctx: ChaosContext, workload: Workload, placed: Promise<void>): Promise<void> {
  await placed;
  const api = workload.scenario.api;
  const uncharged = new Set(workload.orders);
  await waitFor(
    'every order of the storm charged at least once',
    async () => {
      for (const id of [...uncharged]) {
        const payments = await api.payments(id).catch(() => []);
        if (payments.some((p) => p.chargeRequests > 0)) uncharged.delete(id);
      }
      return uncharged.size === 0;
    },
    { timeoutMs: CHARGED_WITHIN_MS, intervalMs: 1_000 },
  ).catch(() => undefined); // a declined or rejected order is never charged: the storm ends anyway
}

/** The one case of scenario 3: the whole workload through a storming PSP. */
export const PSP_STORM_CASE: FaultCase = {
  name: 'storm',
  fault: () => pspStorm(),
  injectAt: 'start',
  hold: untilCharged,
  findings: async (_ctx, workload) => {
    const { figures, problems } = await stormFindings(workload.scenario.api, workload.orders);
    if (figures.forgedWebhooks === 0) problems.push('the storm sent no forged or replayed webhook at all');
    return { problems, extra: { storm: figures } };
  },
};

/**
 * Issue 18 scenario 3: charges hang past the payment service's timeout, answer 5xx or lose their answer;
 * webhooks come three times, shuffled, some forged or replayed. No double charge, no order cancelled while its
 * money is kept, every forged delivery refused, reconciliation settles the rest.
 */
export const pspStormScenario = faultScenario(
  'psp-storm',
  'PSP storm: 30% of charges hang, 10% 5xx, 5% lost answers; webhooks x3 shuffled, 10% forged, 5% replayed',
  [PSP_STORM_CASE],
);
