import { randomUUID } from 'node:crypto';
import { Consumer } from 'kafkajs';
import { StackConfig, stackKafka } from '@checkout/local-stack';

/** The milestones of one saga the bench times, in ms of performance.now(). */
export interface SagaTimes {
  accepted: number;
  paid?: number;
  shipped?: number;
  /** The saga ended another way (rejected, payment failed, cancelled). */
  failed?: string;
}

const MILESTONES: Record<string, 'paid' | 'shipped' | 'failed'> = {
  'order.paid': 'paid',
  'fulfillment.shipment-created': 'shipped',
  'inventory.rejected': 'failed',
  'payment.failed': 'failed',
  'order.cancelled': 'failed',
};

/**
 * Follows the bench's own sagas on Kafka (a fresh group reading only what is produced from now on): each
 * milestone is stamped when it arrives here, so accepted -> `order.paid` includes the outbox relay.
 */
export class SagaWatch {
  readonly sagas = new Map<string, SagaTimes>();
  /** Milestones whose order was not accepted yet when they arrived (202 and event race). */
  private readonly early = new Map<string, Partial<SagaTimes>>();
  private consumer?: Consumer;
  completed = 0;
  failed = 0;
  /** Every `fulfillment.shipment-created` seen, also of orders whose 202 never reached the bench. */
  shippedSeen = 0;

  constructor(private readonly config: StackConfig) {}

  async start(): Promise<this> {
    this.consumer = stackKafka(this.config, 'bench-saga').consumer({
      groupId: `bench-saga-${randomUUID()}`,
      maxWaitTimeInMs: 5_000,
    });
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: Object.keys(MILESTONES), fromBeginning: false });
    const joined = new Promise<void>((resolve) => {
      const off = this.consumer!.on(this.consumer!.events.GROUP_JOIN, () => {
        off();
        resolve();
      });
    });
    await this.consumer.run({
      partitionsConsumedConcurrently: 3,
      eachBatch: async ({ batch }) => {
        const at = performance.now();
        const milestone = MILESTONES[batch.topic];
        if (milestone === 'shipped') this.shippedSeen += batch.messages.length;
        for (const message of batch.messages) {
          const orderId = message.key?.toString();
          if (orderId) this.mark(orderId, milestone, at, batch.topic);
        }
      },
    });
    await joined;
    return this;
  }

  /** Registers an accepted checkout (its 202 arrived at `at`). */
  accepted(orderId: string, at: number): void {
    const times: SagaTimes = { accepted: at, ...this.early.get(orderId) };
    this.early.delete(orderId);
    this.sagas.set(orderId, times);
    if (times.shipped !== undefined) this.completed += 1;
    if (times.failed) this.failed += 1;
  }

  private mark(orderId: string, milestone: 'paid' | 'shipped' | 'failed', at: number, topic: string) {
    const times = this.sagas.get(orderId);
    if (!times) {
      const early = this.early.get(orderId) ?? {};
      if (milestone === 'failed') early.failed = topic;
      else early[milestone] ??= at;
      this.early.set(orderId, early);
      return;
    }
    if (milestone === 'failed') {
      if (!times.failed) this.failed += 1;
      times.failed = topic;
    } else if (times[milestone] === undefined) {
      times[milestone] = at;
      if (milestone === 'shipped') this.completed += 1;
    }
  }

  /** Sagas accepted and neither shipped nor failed yet. */
  get inFlight(): number {
    return this.sagas.size - this.completed - this.failed;
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect();
  }
}
