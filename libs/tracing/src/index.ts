export * from './tracing';
export * from './file-exporter';
