export * from './stock-gate';
export * from './gate.scripts';
