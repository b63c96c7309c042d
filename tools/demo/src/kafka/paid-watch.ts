import { parseEvent } from '@checkout/contracts';
import { SeenMessage, TopicReader } from '@checkout/testing';

/** An `order.paid` event of the run as it landed on Kafka. */
export interface PaidSeen {
  orderId: string;
  /** The record's timestamp on the topic (Debezium stamps it when it relays the outbox row). */
  onKafkaAt: number;
}

/** What is known of one order's order.paid events: the first, how many, how many messages were validated. */
interface PaidState {
  first?: PaidSeen;
  count: number;
  validated: number;
}

/**
 * Watches the public `order.paid` topic, as another team's consumer would. Every message of an order asked
 * about is validated against the contract; one that is not valid (or names another order than its key) is
 * counted as invalid, never silently used.
 */
export class PaidWatch {
  private readonly reader = new TopicReader(['order.paid']);
  private readonly byKey = new Map<string, SeenMessage[]>();
  private readonly checked = new Map<string, PaidState>();
  private scanned = 0;
  /** Messages of asked-about orders that broke the contract, described. */
  readonly invalid: string[] = [];

  async start(): Promise<this> {
    await this.reader.start();
    return this;
  }

  /** The first valid order.paid of an order, if it arrived. */
  paid(orderId: string): PaidSeen | undefined {
    return this.check(orderId).first;
  }

  /** How many valid order.paid events arrived for an order (1 normally; a relay is at least once). */
  count(orderId: string): number {
    return this.check(orderId).count;
  }

  async stop(): Promise<void> {
    await this.reader.stop();
  }

  private check(orderId: string): PaidState {
    this.index();
    const messages = this.byKey.get(orderId) ?? [];
    const state = this.checked.get(orderId) ?? { count: 0, validated: 0 };
    for (const m of messages.slice(state.validated)) {
      try {
        const event = parseEvent(m.value ?? '');
        if (event.type !== 'order.paid' || event.sagaId !== orderId || event.payload.orderId !== orderId)
          throw new Error(`${event.type} of saga ${event.sagaId} under key ${orderId}`);
        state.count += 1;
        state.first ??= { orderId, onKafkaAt: m.timestamp };
      } catch (error) {
        this.invalid.push(`order.paid/${m.partition}@${m.offset}: ${(error as Error).message}`);
      }
    }
    state.validated = messages.length;
    this.checked.set(orderId, state);
    return state;
  }

  private index(): void {
    const messages = this.reader.messages;
    for (; this.scanned < messages.length; this.scanned += 1) {
      const m = messages[this.scanned];
      if (!m.key) continue;
      const list = this.byKey.get(m.key);
      if (list) list.push(m);
      else this.byKey.set(m.key, [m]);
    }
  }
}
