export * from './stock-gate';
export * from './gate.scripts';
export * from './gate-resync';
export * from './redis-auth';
