import { appKill } from './app-kill';
import { infraKill } from './infra-kill';
import { soak } from './soak';
import { Scenario } from './scenario';

export { Scenario, faultScenario, pick } from './scenario';
export { APP_KILL_CASES, appKillCase } from './app-kill';
export { INFRA_KILL_CASES, infraKillCase } from './infra-kill';
export { soak } from './soak';

/**
 * Every scenario `npm run chaos` knows, in the order it runs them. A new scenario is a module under scenarios/
 * exporting a `Scenario`, added here.
 */
export const SCENARIOS: readonly Scenario[] = [appKill, infraKill, soak];
