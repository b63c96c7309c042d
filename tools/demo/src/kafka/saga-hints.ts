import { EventType } from '@checkout/contracts';
import { TopicReader } from '@checkout/testing';

/** Events after which the order service moves an order to a terminal status. */
export const ENDING_EVENTS: readonly EventType[] = [
  'inventory.rejected',
  'inventory.backordered',
  'payment.failed',
  'payment.refunded',
  'fulfillment.shipment-created',
];

/**
 * Which orders had an event on Kafka that ends a saga (keyed by order id), so the demo reads through the
 * order API only the orders that may have moved, and the rest now and then: the observer stays light on the
 * system it measures. A hint, never an answer: the order read API says whether a saga ended.
 */
export class SagaHints {
  private readonly reader = new TopicReader([...ENDING_EVENTS]);
  private readonly counts = new Map<string, number>();
  private scanned = 0;

  async start(): Promise<this> {
    await this.reader.start();
    return this;
  }

  /** How many ending events arrived for an order so far. */
  endingEvents(orderId: string): number {
    const messages = this.reader.messages;
    for (; this.scanned < messages.length; this.scanned += 1) {
      const key = messages[this.scanned].key;
      if (key) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    }
    return this.counts.get(orderId) ?? 0;
  }

  async stop(): Promise<void> {
    await this.reader.stop();
  }
}
