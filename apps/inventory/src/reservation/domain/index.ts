export * from './inventory.errors';
export * from './stock-lines';
export * from './payment-settlement';
export * from './stock-ledger';
