import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { ExponentialBackoff, handleAll, retry } from 'cockatiel';
import { PinoLogger } from 'nestjs-pino';
import { Client } from 'pg';
import { EntityManager } from 'typeorm';
import { BaseConfig } from './config';
import { SERVICE_CONFIG } from './tokens';

/** PostgreSQL identifiers of our channels: lower case, digits and underscores. */
const CHANNEL = /^[a-z][a-z0-9_]{0,62}$/;

/**
 * Inside a transaction: the workers listening on `channel` wake when it commits, in every replica (NOTIFY is
 * delivered at commit, once per transaction and channel, and never when it rolls back).
 */
export async function wakeOnCommit(tx: Pick<EntityManager, 'query'>, channel: string): Promise<void> {
  await tx.query(`SELECT pg_notify($1, '')`, [channel]);
}

/**
 * Wakes this process's workers when any transaction commits work for them (PostgreSQL LISTEN/NOTIFY), so a worker
 * sleeps at rest instead of polling, whichever replica or code path wrote the work. One dedicated connection per
 * process, opened by the first subscriber. When it drops it is opened again with backoff, and then every subscriber
 * is called once, since notifications sent meanwhile are lost; a worker keeps a long safety-net interval anyway.
 */
@Injectable()
export class DatabaseWakeups implements OnApplicationShutdown {
  private readonly subscribers = new Map<string, Set<() => void>>();
  private readonly closing = new AbortController();
  private client?: Client;
  private connecting?: Promise<void>;

  constructor(
    @Inject(SERVICE_CONFIG) private readonly config: BaseConfig,
    private readonly logger: PinoLogger,
  ) {
    logger.setContext('DatabaseWakeups');
  }

  /** Calls `wake` after each commit that notified `channel`; returns what unsubscribes. */
  on(channel: string, wake: () => void): () => void {
    if (!CHANNEL.test(channel)) throw new Error(`invalid wake-up channel ${JSON.stringify(channel)}`);
    let set = this.subscribers.get(channel);
    if (!set) {
      this.subscribers.set(channel, (set = new Set()));
      void this.client?.query(`LISTEN ${channel}`).catch(() => this.client?.end());
    }
    set.add(wake);
    this.connecting ??= this.connect();
    return () => set.delete(wake);
  }

  /** Resolves once the connection listens on every subscribed channel (for specs and readiness). */
  async listening(): Promise<void> {
    await this.connecting;
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing.abort();
    await this.connecting?.catch(() => undefined);
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  private async connect(): Promise<void> {
    const policy = retry(handleAll, {
      maxAttempts: Number.POSITIVE_INFINITY,
      backoff: new ExponentialBackoff({ initialDelay: 500, maxDelay: 10_000 }),
    });
    policy.onRetry(({ delay, ...reason }) =>
      this.logger.warn(
        { err: 'error' in reason ? String(reason.error) : undefined, retryInMs: delay },
        'wake-up connection failed: retrying',
      ),
    );
    try {
      await policy.execute(async ({ signal }) => {
        if (signal.aborted) return;
        const client = new Client({
          connectionString: this.config.DATABASE_URL,
          application_name: `${this.config.SERVICE_NAME}-wakeups`,
        });
        client.on('error', () => undefined);
        client.on('notification', ({ channel }) => this.wakeAll(this.subscribers.get(channel)));
        try {
          await client.connect();
          // Set first: a channel subscribed from now on LISTENs itself (LISTEN twice is harmless).
          this.client = client;
          for (const channel of [...this.subscribers.keys()]) await client.query(`LISTEN ${channel}`);
        } catch (error) {
          if (this.client === client) this.client = undefined;
          await client.end().catch(() => undefined);
          throw error;
        }
        client.on('end', () => this.lost(client));
      }, this.closing.signal);
    } catch (error) {
      if (!this.closing.signal.aborted) throw error;
    }
  }

  /** The connection dropped: listen again, and wake everyone for what may have been missed. */
  private lost(client: Client): void {
    if (this.client !== client || this.closing.signal.aborted) return;
    this.client = undefined;
    this.logger.warn('wake-up connection lost: reconnecting');
    this.connecting = this.connect().then(() => {
      for (const set of this.subscribers.values()) this.wakeAll(set);
    });
  }

  private wakeAll(set: Set<() => void> | undefined): void {
    for (const wake of set ?? []) {
      try {
        wake();
      } catch (error) {
        this.logger.error({ err: String(error) }, 'wake-up subscriber failed');
      }
    }
  }
}
