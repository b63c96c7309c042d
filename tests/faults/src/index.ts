export * from './fault-proxy';
export * from './network-faults';
export * from './psp-storm';
