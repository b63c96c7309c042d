import { StockGate } from '@checkout/stock-gate';
import { waitFor } from '@checkout/testing';
import { ChaosContext } from '../context';
import { FaultCase } from '../fault-case';
import { Workload } from '../workload';
import { killFault, postgresImmediateFault } from '../faults';
import { faultScenario, pick } from './scenario';

/** After a Redis restart the flash-sale gate's counter comes back (order re-arms it from its database). */
async function gateRearmed(ctx: ChaosContext, workload: Workload): Promise<string[]> {
  const sku = workload.flashSku!;
  const gate = StockGate.connect(ctx.config.redis.url, { password: ctx.config.auth?.redisPassword });
  try {
    const units = await waitFor(
      `the gate of ${sku} re-armed after the Redis restart`,
      async () => {
        const left = await gate.remaining(workload.scenario.api.tenant, sku);
        return typeof left === 'number' ? left : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    ctx.log(`redis: the gate of ${sku} was re-armed with ${units} units`);
    return [];
  } catch (error) {
    return [`flash-sale gate of ${sku} not re-armed after the Redis restart: ${(error as Error).message}`];
  } finally {
    await gate.close();
  }
}

/** The cases of scenario 2, one part of the infrastructure each. */
export const INFRA_KILL_CASES: readonly FaultCase[] = [
  { name: 'kafka', fault: ({ config, log }) => killFault(config, ['kafka'], log) },
  // Debezium resumes from the offsets it last flushed: a gap would show as lost, a replay as duplicate copies.
  { name: 'connect', fault: ({ config, log }) => killFault(config, ['connect'], log) },
  { name: 'postgres', fault: ({ config, log }) => postgresImmediateFault(config, log) },
  // Redis keeps the gate in memory only: the restart loses every counter; the gate is re-armed, never oversells.
  {
    name: 'redis',
    fault: ({ config, log }) => killFault(config, ['redis'], log),
    flashSale: true,
    check: gateRearmed,
  },
];

/** Issue 18 scenario 2: the broker, Connect, PostgreSQL and Redis die mid-run and come back. */
export const infraKill = faultScenario(
  'infra-kill',
  'Kafka broker SIGKILL, Kafka Connect SIGKILL, PostgreSQL immediate shutdown, Redis restart',
  INFRA_KILL_CASES,
);

/** One case of scenario 2 by name (the CI subset picks one). */
export const infraKillCase = (name: string): FaultCase => pick(INFRA_KILL_CASES, name);
