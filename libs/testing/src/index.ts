export * from './kafka';
export * from './database';
export * from './events';
export { waitFor, loadStackConfig } from '@checkout/local-stack';
export * from './conservation';
export * from './golden';
export * from './saga-harness';
export * from './service-process';
