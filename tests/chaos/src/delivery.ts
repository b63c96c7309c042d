/**
 * The "no lost events" check of issue 18: every outbox row of the run's sagas reached its Kafka topic, and every
 * consumer of that topic recorded it in its inbox (exactly once: the inbox's primary key allows no second row),
 * unless that consumer parked it on the DLQ. `checkDelivery` is pure; the fetching is in delivery-sources.ts.
 */

/** An outbox row of a service's database. */
export interface OutboxRow {
  service: string;
  eventId: string;
  type: string;
  sagaId: string;
}

/** A saga event as read from Kafka (`copies`: deliveries of the same eventId, Debezium relays at least once). */
export interface RelayedEvent {
  topic: string;
  eventId: string;
  sagaId: string;
  copies: number;
}

/** An inbox row: `service` applied `eventId`. */
export interface InboxRow {
  service: string;
  eventId: string;
}

/** A message a consumer parked on `<topic>.dlq`, with the reason from its headers. */
export interface DeadLetter {
  topic: string;
  sagaId: string;
  eventId: string;
  consumer: string;
  code: string;
  reason: string;
}

/** What the check looks at. `subscribers`: per event type, the services that consume it. */
export interface DeliveryInput {
  outbox: OutboxRow[];
  relayed: RelayedEvent[];
  inbox: InboxRow[];
  subscribers: Record<string, string[]>;
  deadLetters: DeadLetter[];
}

/** The check's answer: counts, and each lost event named. */
export interface DeliveryVerdict {
  outboxRows: number;
  relayedEvents: number;
  /** Extra copies of an event on Kafka (redelivery after a crash; the inbox makes them harmless). */
  duplicateCopies: number;
  /** Outbox rows that never reached Kafka. */
  notRelayed: string[];
  /** (service, event) pairs a subscriber never applied and did not park. */
  notConsumed: string[];
  deadLetters: DeadLetter[];
  /** notRelayed + notConsumed. */
  lost: number;
}

/** Matches outbox rows to Kafka and Kafka events to every subscriber's inbox. */
export function checkDelivery(input: DeliveryInput): DeliveryVerdict {
  const relayed = new Map(input.relayed.map((e) => [e.eventId, e]));
  const notRelayed = input.outbox
    .filter((row) => relayed.get(row.eventId)?.topic !== row.type)
    .map((row) => `${row.service} outbox ${row.type} ${row.eventId} (saga ${row.sagaId}) is not on Kafka`);
  const applied = new Set(input.inbox.map((r) => `${r.service} ${r.eventId}`));
  const parked = new Set(input.deadLetters.map((d) => `${d.consumer} ${d.eventId}`));
  const notConsumed: string[] = [];
  for (const event of input.relayed)
    for (const service of input.subscribers[event.topic] ?? []) {
      const key = `${service} ${event.eventId}`;
      if (!applied.has(key) && !parked.has(key))
        notConsumed.push(`${service} never applied ${event.topic} ${event.eventId} (saga ${event.sagaId})`);
    }
  return {
    outboxRows: input.outbox.length,
    relayedEvents: input.relayed.length,
    duplicateCopies: input.relayed.reduce((n, e) => n + e.copies - 1, 0),
    notRelayed,
    notConsumed,
    deadLetters: input.deadLetters,
    lost: notRelayed.length + notConsumed.length,
  };
}
