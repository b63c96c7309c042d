export * from './saga-step';
export * from './saga-state';
export * from './stuck-policy';
