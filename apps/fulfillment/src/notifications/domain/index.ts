export * from './notification-templates';
export * from './voucher-code';
