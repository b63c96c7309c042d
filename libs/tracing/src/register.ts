import { startTracing } from './tracing';

// Imported first by every service's main.ts, before http and pg load, so their instrumentation applies.
startTracing(process.env.SERVICE_NAME ?? 'unknown-service');
