export * from './config';
export * from './tokens';
export * from './api-error';
export * from './service-kit.module';
export * from './bootstrap';
export * from './consumer.host';
export * from './tenancy';
