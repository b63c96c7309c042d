import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { EVENT_SCHEMAS, envelopeOf } from '@checkout/contracts';
import { REPO_ROOT } from '@checkout/local-stack';
import { KAFKA_BOOTSTRAP, TOPIC_PARTITIONS } from './manifests';

/** The public topics: the ones other teams may consume. Internal saga topics are not a contract. */
export const PUBLIC_TOPICS = ['order.paid'] as const;

/** Kafka headers the Debezium Outbox Event Router copies from the outbox row (infra/debezium/*.json). */
export const HEADERS: Record<string, { description: string; format?: string; pattern?: string }> = {
  eventId: { description: 'Envelope eventId (uuid): dedupe on it.', format: 'uuid' },
  eventType: { description: 'Envelope type, equal to the topic name.' },
  eventVersion: { description: 'Envelope version as decimal text, e.g. "1".', pattern: '^[1-9][0-9]*$' },
  tenantId: { description: 'The merchant the order belongs to.' },
  sagaId: { description: 'The order id: every event of one checkout shares it.', format: 'uuid' },
  correlationId: { description: 'Correlation id of the checkout request.' },
  causationId: {
    description: 'The eventId this event reacts to; a null-valued header when the envelope has null.',
  },
  traceparent: {
    description: 'W3C trace context of the write that produced the event; null-valued when unknown.',
  },
  sequence: {
    description: 'Per-saga, per-producer sequence number as decimal text: shows a gap or a reordering.',
    pattern: '^[1-9][0-9]*$',
  },
};

const camel = (topic: string) => topic.replace(/[.-]([a-z])/g, (_, c: string) => c.toUpperCase());

/** JSON Schema (draft-07, the AsyncAPI default schema dialect) of one event version's full envelope. */
export function draft7SchemaOf(type: keyof typeof EVENT_SCHEMAS, version: number): Record<string, unknown> {
  const versions: Record<number, z.ZodType> = EVENT_SCHEMAS[type];
  const schema = z.toJSONSchema(envelopeOf(type, version, versions[version]), {
    target: 'draft-7',
  }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/** The AsyncAPI 3.0 document of the public topics, every version of each, generated from libs/contracts. */
export function asyncApiDocument(): Record<string, unknown> {
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  for (const topic of PUBLIC_TOPICS) {
    const channelMessages: Record<string, unknown> = {};
    for (const version of Object.keys(EVENT_SCHEMAS[topic]).map(Number)) {
      const id = `${camel(topic)}V${version}`;
      const fixture = JSON.parse(
        readFileSync(join(REPO_ROOT, 'libs', 'contracts', 'fixtures', `${topic}.v${version}.json`), 'utf8'),
      ) as Record<string, unknown>;
      messages[id] = {
        name: topic,
        title: `${topic} v${version}`,
        summary: `The envelope of ${topic} version ${version}; schema also at libs/contracts/schemas/${topic}.v${version}.json.`,
        contentType: 'application/json',
        headers: {
          type: 'object',
          required: ['eventId', 'eventType', 'eventVersion', 'tenantId', 'sagaId', 'sequence'],
          properties: Object.fromEntries(
            Object.entries(HEADERS).map(([name, h]) => [name, { type: 'string', ...h }]),
          ),
        },
        payload: draft7SchemaOf(topic, version),
        bindings: {
          kafka: {
            key: { type: 'string', format: 'uuid', description: 'The order id (= sagaId).' },
            bindingVersion: '0.5.0',
          },
        },
        examples: [
          {
            name: 'fixture',
            summary: `libs/contracts/fixtures/${topic}.v${version}.json`,
            headers: {
              eventId: fixture.eventId,
              eventType: fixture.type,
              eventVersion: String(fixture.version),
              tenantId: fixture.tenantId,
              sagaId: fixture.sagaId,
              correlationId: fixture.correlationId,
              causationId: fixture.causationId,
              traceparent: fixture.traceparent,
              sequence: String(fixture.sequence),
            },
            payload: fixture,
          },
        ],
      };
      channelMessages[id] = { $ref: `#/components/messages/${id}` };
    }
    const channel = camel(topic);
    channels[channel] = {
      address: topic,
      title: topic,
      description: `Keyed by order id (${TOPIC_PARTITIONS} partitions in Kubernetes, 3 locally): every event of one order is on one partition, in order. At-least-once: dedupe by eventId.`,
      messages: channelMessages,
      bindings: {
        kafka: {
          topic,
          partitions: TOPIC_PARTITIONS,
          replicas: 3,
          topicConfiguration: { 'cleanup.policy': ['delete'], 'retention.ms': 7 * 24 * 3600_000 },
          bindingVersion: '0.5.0',
        },
      },
    };
    operations[`consume${channel[0].toUpperCase()}${channel.slice(1)}`] = {
      action: 'receive',
      title: `Consume ${topic}`,
      summary: 'What a consumer team does: read, validate, dedupe by eventId, apply.',
      channel: { $ref: `#/channels/${channel}` },
      messages: Object.keys(channelMessages).map((id) => ({ $ref: `#/channels/${channel}/messages/${id}` })),
    };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'checkout-saga public events',
      version: '1.0.0',
      description:
        'Events other teams may consume. Generated from libs/contracts by tools/k8s (node tools/k8s/dist/src/generate.js): do not edit. Within a version, fields are only ever added as optional; a breaking change is a new version. See docs/consumers.md.',
      license: { name: 'Apache-2.0' },
    },
    defaultContentType: 'application/json',
    servers: {
      kubernetes: {
        host: KAFKA_BOOTSTRAP,
        protocol: 'kafka-secure',
        description: 'Strimzi cluster of infra/k8s (TLS, SCRAM-SHA-512).',
      },
      local: { host: 'localhost:59092', protocol: 'kafka', description: 'npm run up (KAFKA_PORT).' },
    },
    channels,
    operations,
    components: { messages },
  };
}
