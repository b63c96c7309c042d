/** Injection token of the service's parsed configuration. */
export const SERVICE_CONFIG = Symbol('SERVICE_CONFIG');
/** Injection token of the service's prom-client registry. */
export const METRICS_REGISTRY = Symbol('METRICS_REGISTRY');
/** Injection token of the service's outbox writer. */
export const OUTBOX_WRITER = Symbol('OUTBOX_WRITER');
/** Injection token: whether the service owns a database (readiness pings it). */
export const HAS_DATABASE = Symbol('HAS_DATABASE');
/** Injection token: whether the service publishes through an outbox (its relay gauges and outbox retention run). */
export const HAS_OUTBOX = Symbol('HAS_OUTBOX');
