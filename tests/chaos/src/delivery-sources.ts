import { AssignerProtocol } from 'kafkajs';
import { Client } from 'pg';
import { SAGA_TOPICS, dlqTopic } from '@checkout/contracts';
import { DB_SERVICES, OUTBOX_SERVICES, StackConfig, stackKafka, waitFor } from '@checkout/local-stack';
import { SeenMessage, TopicReader } from '@checkout/testing';
import {
  DeadLetter,
  DeliveryInput,
  DeliveryVerdict,
  InboxRow,
  OutboxRow,
  RelayedEvent,
  checkDelivery,
} from './delivery';

const DLQ_TOPICS = new Set<string>(SAGA_TOPICS.map(dlqTopic));

/** Runs one query on a service's database with its own login role. */
async function query<T>(config: StackConfig, database: string, sql: string, params: unknown[]): Promise<T[]> {
  const client = new Client({
    host: '127.0.0.1',
    port: config.pg.port,
    user: database,
    password: config.devDbPassword,
    database,
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

const header = (m: SeenMessage, name: string) => m.headers[name] ?? '';

/** The event id of a relayed message: the outbox router puts the row id in the `eventId` header. */
function eventIdOf(m: SeenMessage): string {
  if (m.headers.eventId) return m.headers.eventId;
  try {
    return String(m.json<{ eventId?: string }>().eventId ?? '');
  } catch {
    return '';
  }
}

/**
 * Which services consume each saga topic: from the members' assignments of the services' consumer groups
 * (`<service>` and `<service>-<group>`), united with what the inboxes show each service has applied before (a
 * group with no member at this instant still counts).
 */
export async function subscribers(config: StackConfig): Promise<Record<string, string[]>> {
  const out = new Map<string, Set<string>>();
  const add = (topic: string, service: string) => {
    if (!(SAGA_TOPICS as readonly string[]).includes(topic)) return;
    if (!out.has(topic)) out.set(topic, new Set());
    out.get(topic)!.add(service);
  };
  const admin = stackKafka(config, 'chaos-admin').admin();
  await admin.connect();
  try {
    const { groups } = await admin.listGroups();
    const owned = groups.flatMap((g) => {
      const svc = DB_SERVICES.find((s) => g.groupId === s.name || g.groupId.startsWith(`${s.name}-`));
      return svc ? [{ groupId: g.groupId, service: svc.name as string }] : [];
    });
    if (owned.length) {
      const described = await admin.describeGroups(owned.map((g) => g.groupId));
      for (const group of described.groups) {
        const service = owned.find((g) => g.groupId === group.groupId)!.service;
        for (const member of group.members) {
          const assignment = AssignerProtocol.MemberAssignment.decode(member.memberAssignment);
          for (const topic of Object.keys(assignment?.assignment ?? {})) add(topic, service);
        }
      }
    }
  } finally {
    await admin.disconnect();
  }
  for (const svc of DB_SERVICES) {
    const rows = await query<{ type: string }>(config, svc.database, 'SELECT DISTINCT type FROM inbox', []);
    for (const { type } of rows) add(type, svc.name);
  }
  return Object.fromEntries([...out].map(([topic, services]) => [topic, [...services].sort()]));
}

/** Reads everything the check needs about the given sagas: outbox rows, Kafka, inboxes, DLQ. */
export async function fetchDelivery(
  config: StackConfig,
  reader: TopicReader,
  sagaIds: string[],
  subs: Record<string, string[]>,
): Promise<DeliveryInput> {
  const sagas = new Set(sagaIds);
  const outbox: OutboxRow[] = [];
  for (const svc of OUTBOX_SERVICES) {
    const rows = await query<{ id: string; type: string; saga_id: string }>(
      config,
      svc.database!,
      'SELECT id, type, saga_id FROM outbox WHERE saga_id = ANY($1::uuid[])',
      [sagaIds],
    );
    outbox.push(...rows.map((r) => ({ service: svc.name, eventId: r.id, type: r.type, sagaId: r.saga_id })));
  }
  const inbox: InboxRow[] = [];
  for (const svc of DB_SERVICES) {
    const rows = await query<{ consumer: string; event_id: string }>(
      config,
      svc.database,
      'SELECT consumer, event_id FROM inbox WHERE saga_id = ANY($1::uuid[])',
      [sagaIds],
    );
    inbox.push(...rows.map((r) => ({ service: r.consumer, eventId: r.event_id })));
  }
  const relayed = new Map<string, RelayedEvent>();
  const deadLetters: DeadLetter[] = [];
  for (const m of reader.matching((x) => x.key !== null && sagas.has(x.key))) {
    if (DLQ_TOPICS.has(m.topic)) {
      deadLetters.push({
        topic: m.topic,
        sagaId: m.key!,
        eventId: header(m, 'dlq-event-id') || eventIdOf(m),
        consumer: header(m, 'dlq-consumer'),
        code: header(m, 'dlq-code'),
        reason: header(m, 'dlq-reason'),
      });
      continue;
    }
    const eventId = eventIdOf(m);
    const seen = relayed.get(eventId);
    if (seen) seen.copies += 1;
    else relayed.set(eventId, { topic: m.topic, eventId, sagaId: m.key!, copies: 1 });
  }
  return { outbox, relayed: [...relayed.values()], inbox, subscribers: subs, deadLetters };
}

/**
 * Waits until no event of the sagas is lost (consumers catch up after a restart) or the deadline passes, and
 * returns the last verdict either way.
 */
export async function awaitDelivery(
  config: StackConfig,
  reader: TopicReader,
  sagaIds: string[],
  timeoutMs: number,
): Promise<DeliveryVerdict> {
  const subs = await subscribers(config);
  let verdict: DeliveryVerdict | undefined;
  try {
    await waitFor(
      'every outbox row of the run on Kafka and in every subscriber inbox',
      async () => {
        verdict = checkDelivery(await fetchDelivery(config, reader, sagaIds, subs));
        return verdict.lost === 0;
      },
      { timeoutMs, intervalMs: 2_000 },
    );
  } catch {
    /* the last verdict names what is lost */
  }
  return verdict ?? checkDelivery(await fetchDelivery(config, reader, sagaIds, subs));
}

/** The reader every check of a run shares: every saga topic and its DLQ, from the beginning. */
export const sagaTopicReader = () => new TopicReader([...SAGA_TOPICS, ...SAGA_TOPICS.map(dlqTopic)]);
