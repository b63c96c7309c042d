import { FaultCase } from '../fault-case';
import { ChaosPart, killFault } from '../faults';
import { faultScenario, pick } from './scenario';

const kill = (name: string, parts: ChaosPart[]): FaultCase => ({
  name,
  fault: ({ config, log }) => killFault(config, parts, log),
});

/** The cases of scenario 1: each app alone, then two at once. */
export const APP_KILL_CASES: readonly FaultCase[] = [
  kill('order', ['order']),
  kill('inventory', ['inventory']),
  kill('payment', ['payment']),
  kill('fulfillment', ['fulfillment']),
  kill('saga-tracker', ['saga-tracker']),
  kill('inventory+payment', ['inventory', 'payment']),
];

/** One case of scenario 1 by name (the CI subset picks one). */
export const appKillCase = (name: string): FaultCase => pick(APP_KILL_CASES, name);

/** Issue 18 scenario 1: SIGKILL of each app mid-run, then a restart; two at once. */
export const appKill = faultScenario(
  'app-kill',
  'SIGKILL of each app mid-run, then restart; two at once',
  APP_KILL_CASES,
);
