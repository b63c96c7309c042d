import { FaultCase } from '../fault-case';
import { killFault, postgresImmediateFault } from '../faults';
import { faultScenario, pick } from './scenario';

/** The cases of scenario 2, one part of the infrastructure each. */
export const INFRA_KILL_CASES: readonly FaultCase[] = [
  { name: 'kafka', fault: ({ config, log }) => killFault(config, ['kafka'], log) },
  // Debezium resumes from the offsets it last flushed: a gap would show as lost, a replay as duplicate copies.
  { name: 'connect', fault: ({ config, log }) => killFault(config, ['connect'], log) },
  { name: 'postgres', fault: ({ config, log }) => postgresImmediateFault(config, log) },
  // Redis keeps the gate in memory only: the restart loses every counter; the gate is re-armed, never oversells.
  { name: 'redis', fault: ({ config, log }) => killFault(config, ['redis'], log), flashSale: true },
];

/** Issue 18 scenario 2: the broker, Connect, PostgreSQL and Redis die mid-run and come back. */
export const infraKill = faultScenario(
  'infra-kill',
  'Kafka broker SIGKILL, Kafka Connect SIGKILL, PostgreSQL immediate shutdown, Redis restart',
  INFRA_KILL_CASES,
);

/** One case of scenario 2 by name (the CI subset picks one). */
export const infraKillCase = (name: string): FaultCase => pick(INFRA_KILL_CASES, name);
