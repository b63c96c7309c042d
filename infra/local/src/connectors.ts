import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './config';
import { OUTBOX_SERVICES, ServiceSpec, dbEnvPrefix } from './topology';

/** Where the connector definitions live: the same JSON files serve the local stack, compose and Kubernetes. */
export const CONNECTOR_DIR = join(REPO_ROOT, 'infra', 'debezium');

/** A Kafka Connect connector definition as stored in infra/debezium/<service>.json. */
export interface ConnectorDefinition {
  name: string;
  config: Record<string, string>;
}

/** Outbox columns the Outbox Event Router copies into Kafka headers, as `column:header:name`. */
const HEADER_FIELDS = [
  'id:header:eventId',
  'type:header:eventType',
  'version:header:eventVersion',
  'tenant_id:header:tenantId',
  'saga_id:header:sagaId',
  'correlation_id:header:correlationId',
  'causation_id:header:causationId',
  'traceparent:header:traceparent',
  'sequence:header:sequence',
];

/** The Debezium outbox connector of one service with an outbox: its database, slot and topic prefix by name. */
export function outboxConnector(service: ServiceSpec): ConnectorDefinition {
  if (!service.outbox) throw new Error(`${service.name} has no outbox: no connector`);
  const db = dbEnvPrefix(service.name);
  const slot = `${service.name.replace(/-/g, '_')}_outbox`;
  return {
    name: `${service.name}-outbox`,
    config: {
      'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
      'tasks.max': '1',
      'plugin.name': 'pgoutput',
      'database.hostname': `\${env:${db}_HOST}`,
      'database.port': `\${env:${db}_PORT}`,
      'database.dbname': `\${env:${db}_NAME}`,
      'database.user': '${env:CDC_DB_USER}',
      'database.password': '${env:CDC_DB_PASSWORD}',
      'topic.prefix': service.name,
      'slot.name': slot,
      // The publication is created by MESSAGING_MIGRATIONS (outbox only), never by Debezium.
      'publication.name': 'outbox_publication',
      'publication.autocreate.mode': 'disabled',
      'table.include.list': 'public.outbox',
      'column.exclude.list': 'public.outbox.written_lsn',
      'snapshot.mode': 'no_data',
      'tombstones.on.delete': 'false',
      // How long a quiet connector waits before it looks again, in both of its threads: the WAL reader sleeps this
      // long after 5 empty reads, and the task's ChangeEventQueue.poll() returns after this long with nothing. The
      // WAL reader's sleep is what an event waits for on each outbox hop, and order.paid is four hops from the
      // checkout. bench:saga, 10 checkouts/s, accepted -> order.paid p50/p99: 200 ms 521/614, 100 ms 267/320-418,
      // 50 ms 155/229-271; at 20/s 100 ms gives 468/2923 and 50 ms 303/712 for the same CPU per saga. A quiet
      // connector costs about 0.3% of a core more at 50 than at 200 ms (bench/results/s32/lat*, idle-agent-*).
      // Debezium spins on the clock for up to 1 ms at the end of each quiet poll (Threads.Timer.expired() is
      // `elapsed > interval` while remaining() is `interval - elapsed`): 2% of a core per connector at 50 ms. The
      // Connect worker's agent (infra/connect-agent) makes it park instead, lets the task's quiet poll wait 1 s (a
      // queued record still wakes it at once), and lets a reader quiet for 1 s wait on its socket for the first
      // byte instead of this pause.
      'poll.interval.ms': '50',
      // The task returns a record as soon as one is queued. The queue only wakes its poller when max.batch.size
      // records wait, so with the default (2048) a lone record also waited out the task's interval. With 1, a hop
      // costs at most one WAL-reader pause. A burst is drained one record per poll(), each returned at once.
      'max.batch.size': '1',
      // A quiet database still confirms its slot position every 30 s: its last transaction is confirmed by the next
      // change the connector reads, so the outbox age of a database gone quiet grows to about this much before it
      // drops to 0 (the outbox age alert is 60 s). Each heartbeat is a write, a WAL read, two Kafka records and an
      // offset confirmation: at rest, 10 s -> 30 s took the stack from 8.9% to 7.3% of a core (Connect 3.1 -> 2.3,
      // Kafka 2.4 -> 2.1, PostgreSQL 0.53 -> 0.36; back-to-back 90 s windows on one stack).
      'heartbeat.interval.ms': '30000',
      'topic.heartbeat.prefix': '__debezium-heartbeat',
      'heartbeat.action.query':
        'WITH gone AS (DELETE FROM public.debezium_heartbeat) INSERT INTO public.debezium_heartbeat (beat_at) VALUES (now())',
      'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
      transforms: 'outbox',
      'transforms.outbox.type': 'io.debezium.transforms.outbox.EventRouter',
      'transforms.outbox.table.field.event.id': 'id',
      'transforms.outbox.table.field.event.key': 'aggregate_id',
      'transforms.outbox.table.field.event.payload': 'payload',
      'transforms.outbox.route.by.field': 'type',
      'transforms.outbox.route.topic.replacement': '${routedByValue}',
      'transforms.outbox.table.fields.additional.placement': HEADER_FIELDS.join(','),
    },
  };
}

/** Every connector file of infra/debezium as generated from the topology: file name -> JSON text. */
export function generatedConnectorFiles(): Record<string, string> {
  return Object.fromEntries(
    OUTBOX_SERVICES.map((s) => [`${s.name}.json`, JSON.stringify(outboxConnector(s), null, 2) + '\n']),
  );
}

/** Writes infra/debezium/<service>.json for every service with an outbox; a spec checks they are current. */
export function writeConnectorFiles(): string[] {
  const files = generatedConnectorFiles();
  for (const [name, text] of Object.entries(files)) writeFileSync(join(CONNECTOR_DIR, name), text);
  return Object.keys(files);
}
