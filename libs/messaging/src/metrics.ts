import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { refreshFamily } from './scrape-probe';

/** The scrape-probe family that fills the lag and dead-letter gauges (see ConsumerLagMonitor). */
export const KAFKA_LAG_PROBES = 'kafka-lag';

/** A metric a service may register from several places (two consumers, two monitors): created once. */
function getOrCreate<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}

/** Consumed events by consumer, type and outcome (applied, duplicate, dlq, ignored): both consumer runtimes. */
export const consumedCounter = (registry: Registry) =>
  getOrCreate(
    registry,
    'messaging_consumed_total',
    () =>
      new Counter<'consumer' | 'type' | 'outcome'>({
        name: 'messaging_consumed_total',
        help: 'Consumed events by outcome',
        labelNames: ['consumer', 'type', 'outcome'],
        registers: [registry],
      }),
  );

/** Handler time per event, inbox included. */
export const handlerDuration = (registry: Registry) =>
  getOrCreate(
    registry,
    'messaging_handler_duration_seconds',
    () =>
      new Histogram<'consumer' | 'type'>({
        name: 'messaging_handler_duration_seconds',
        help: 'Handler time per event, inbox included; an event applied in a chunk counts its share of the chunk',
        labelNames: ['consumer', 'type'],
        registers: [registry],
      }),
  );

/** Messages of a topic a consumer group has not consumed yet. */
export const consumerLagGauge = (registry: Registry) =>
  getOrCreate(
    registry,
    'messaging_consumer_lag',
    () =>
      new Gauge<'consumer' | 'topic'>({
        name: 'messaging_consumer_lag',
        help: 'Messages of a topic the consumer group has not consumed yet (read from Kafka when scraped)',
        labelNames: ['consumer', 'topic'],
        registers: [registry],
        collect: refreshFamily(registry, KAFKA_LAG_PROBES),
      }),
  );

/** Messages parked on a dead-letter topic. */
export const dlqDepthGauge = (registry: Registry) =>
  getOrCreate(
    registry,
    'messaging_dlq_messages',
    () =>
      new Gauge<'topic'>({
        name: 'messaging_dlq_messages',
        help: 'Messages parked on the dead-letter topic of a consumed topic (any consumer of it; read when scraped)',
        labelNames: ['topic'],
        registers: [registry],
        collect: refreshFamily(registry, KAFKA_LAG_PROBES),
      }),
  );
