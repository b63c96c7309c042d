import { appKill } from './app-kill';
import { infraKill } from './infra-kill';
import { networkFaults } from './network-faults';
import { pspStormScenario } from './psp-storm';
import { soak } from './soak';
import { Scenario } from './scenario';

export { Scenario, faultScenario, pick } from './scenario';
export { APP_KILL_CASES, appKillCase } from './app-kill';
export { INFRA_KILL_CASES, infraKillCase } from './infra-kill';
export { PSP_STORM_CASE, pspStormScenario } from './psp-storm';
export {
  NETWORK_FAULT_CASES,
  linkCase,
  networkFault,
  networkFaultCase,
  networkFaults,
} from './network-faults';
export { soak } from './soak';

/**
 * Every scenario `npm run chaos` knows, in the order it runs them (issue 18's numbering). A new scenario is a
 * module under scenarios/ exporting a `Scenario`, added here.
 */
export const SCENARIOS: readonly Scenario[] = [appKill, infraKill, pspStormScenario, networkFaults, soak];
