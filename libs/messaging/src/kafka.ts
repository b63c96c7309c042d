import { Kafka, logLevel } from 'kafkajs';

/** The one place that builds a Kafka client, so a switch of client library touches this lib only. */
export function createKafka(brokers: string[], clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.WARN,
    retry: { initialRetryTime: 200, retries: 10 },
    logCreator:
      () =>
      ({ level, log }) => {
        if (level <= logLevel.ERROR)
          console.error(JSON.stringify({ level: 'error', component: 'kafkajs', ...log }));
      },
  });
}

/** Parses a comma-separated broker list (KAFKA_BROKERS). */
export const parseBrokers = (value: string): string[] =>
  value
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
