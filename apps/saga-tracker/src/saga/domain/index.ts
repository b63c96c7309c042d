export * from './saga-step';
export * from './saga-state';
export * from './stuck-policy';
export * from './saga.errors';
