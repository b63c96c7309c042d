import { DEFAULT_SCHEDULE, FaultStep, Link, ServiceBehindProxy, serviceBehindProxy } from '@checkout/faults';
import { ChaosContext } from '../context';
import { FaultCase } from '../fault-case';
import { Fault, restart } from '../faults';
import { faultScenario, pick } from './scenario';

/** The stack's apps whose links the scenario can break. */
type App = 'order' | 'inventory' | 'payment' | 'fulfillment';

const LINK_NAMES: Record<Link, string> = { postgres: 'PostgreSQL', kafka: 'Kafka' };

/**
 * A service's link to PostgreSQL or Kafka through the fault proxy: `prepare` replaces the stack's service by one
 * behind the proxy, `inject` plays the schedule (latency, a stall, resets, a black hole), `restore` heals the link
 * and `dispose` starts the stack's own service again.
 */
export function networkFault(
  ctx: ChaosContext,
  service: App,
  schedule: readonly FaultStep[] = DEFAULT_SCHEDULE,
  link: Link = 'postgres',
): Fault & { stats(): Record<string, number> } {
  let behind: ServiceBehindProxy | undefined;
  const peer = LINK_NAMES[link];
  return {
    name: `${service} <-> ${peer}: ${schedule.map((s) => `${s.mode.kind} ${s.forMs / 1000} s`).join(', ')}`,
    async prepare() {
      behind = await serviceBehindProxy(ctx.config, service, link);
      ctx.log(`${service} (pid ${behind.pid}) reaches ${peer} through the fault proxy`);
    },
    async inject() {
      await behind!.play(schedule, ctx.log);
    },
    async restore() {
      behind?.proxy.heal();
    },
    async dispose() {
      await behind?.close();
      await restart(ctx.config, service, ctx.log);
    },
    stats: () => ({ ...(behind?.stats ?? {}) }),
  };
}

/** A case of a service whose database or Kafka link fails on a schedule (the CI subset plays a shorter one). */
export const linkCase = (
  service: App,
  schedule: readonly FaultStep[] = DEFAULT_SCHEDULE,
  link: Link = 'postgres',
): FaultCase => {
  let fault: ReturnType<typeof networkFault> | undefined;
  return {
    name: `${service}-${link}`,
    fault: (ctx) => (fault = networkFault(ctx, service, schedule, link)),
    // The schedule is the window: inject plays it to its end.
    hold: async () => undefined,
    findings: async () => {
      const stats = fault?.stats() ?? {};
      return {
        problems:
          (stats.reset ?? 0) > 0 ? [] : [`the proxy reset no connection of ${service}: no fault happened`],
        extra: { proxy: stats },
      };
    },
  };
};

/**
 * The cases of scenario 4: order's and payment's links to PostgreSQL, and the Kafka links of payment (it consumes
 * inventory.reserved and order.cancelled) and of inventory (order.created, payment.succeeded, the compensations).
 */
export const NETWORK_FAULT_CASES: readonly FaultCase[] = [
  linkCase('order'),
  linkCase('payment'),
  linkCase('payment', DEFAULT_SCHEDULE, 'kafka'),
  linkCase('inventory', DEFAULT_SCHEDULE, 'kafka'),
];

/** One case of scenario 4 by name (the CI subset picks one). */
export const networkFaultCase = (name: string): FaultCase => pick(NETWORK_FAULT_CASES, name);

/**
 * Issue 18 scenario 4: an app's connections to PostgreSQL or Kafka go through a TCP fault proxy on loopback (added
 * latency, a stall, resets, black-holing for seconds) while checkouts run; every checkout is retried with its key.
 */
export const networkFaults = faultScenario(
  'network-faults',
  'an app <-> PostgreSQL or Kafka through a loopback fault proxy: latency, a stall, resets, a black hole',
  NETWORK_FAULT_CASES,
);
