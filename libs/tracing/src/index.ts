export * from './tracing';
export * from './file-exporter';
export * from './request-spans';
