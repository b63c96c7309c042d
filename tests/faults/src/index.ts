export * from './fault-proxy';
export * from './harness';
export * as networkFaults from './scenarios/network-faults';
export * as pspStorm from './scenarios/psp-storm';
