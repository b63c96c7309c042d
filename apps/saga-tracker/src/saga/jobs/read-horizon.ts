import { Inject, Injectable } from '@nestjs/common';
import { KafkaOffsetReader } from '@checkout/messaging';
import { SERVICE_CONFIG } from '@checkout/service-kit';
import { SagaTrackerConfig } from '../../config/saga-tracker.config';
import { TRACKED_TYPES } from '../domain';
import { HORIZON_OFFSETS } from '../saga.tokens';

/** The end offsets of every tracked partition at one instant. */
export interface EndsSample {
  at: Date;
  /** `topic/partition` -> low and high watermark. */
  ends: Map<string, { low: number; high: number }>;
}

/**
 * The latest sampled instant up to which the consumer group has read everything: every partition's committed
 * position is at or past the high watermark sampled then (a partition never committed is read from its low
 * watermark). Null when the group has not caught up with any sample yet.
 */
export function caughtUpAt(
  samples: readonly EndsSample[],
  committed: ReadonlyMap<string, number>,
): Date | null {
  let latest: Date | null = null;
  for (const sample of samples) {
    const done = [...sample.ends].every(([key, { low, high }]) => {
      const at = committed.get(key) ?? -1;
      return (at >= 0 ? at : low) >= high;
    });
    if (done && (latest === null || sample.at > latest)) latest = sample.at;
  }
  return latest;
}

/**
 * How far the tracker has read, as an instant: the sweep judges sagas "stuck" only as of that instant, so a
 * tracker that lags (a backlog after a restart, a busy broker) never reports a step it has not read yet as
 * missing.
 */
@Injectable()
export class ReadHorizon {
  private samples: EndsSample[] = [];
  private readonly maxSamples = 600;
  /** The consumer group is the service name (InboxTransport): the horizon is how far that group has read. */
  private readonly groupId: string;
  private readonly topics: readonly string[] = TRACKED_TYPES;

  constructor(
    @Inject(HORIZON_OFFSETS) private readonly offsets: KafkaOffsetReader,
    @Inject(SERVICE_CONFIG) config: Pick<SagaTrackerConfig, 'SERVICE_NAME'>,
  ) {
    this.groupId = config.SERVICE_NAME;
  }

  /**
   * Samples the end offsets now, then the group's commits; returns the instant read up to, or null. One ListOffsets
   * pair and one OffsetFetch for the 16 topics (kafkajs' admin API asked topic by topic: 33 requests).
   */
  async sample(): Promise<Date | null> {
    const at = new Date();
    const ends = new Map<string, { low: number; high: number }>();
    for (const [topic, partitions] of await this.offsets.ends([...this.topics]))
      for (const p of partitions)
        ends.set(`${topic}/${p.partition}`, { low: Number(p.low), high: Number(p.high) });
    this.samples.push({ at, ends });
    const committed = new Map<string, number>();
    for (const [topic, partitions] of await this.offsets.committed(this.groupId, [...this.topics]))
      for (const p of partitions) committed.set(`${topic}/${p.partition}`, Number(p.offset));
    const horizon = caughtUpAt(this.samples, committed);
    // Samples at or before the horizon are answered; keep the horizon's own sample as the new baseline.
    if (horizon) this.samples = this.samples.filter((s) => s.at >= horizon);
    if (this.samples.length > this.maxSamples) this.samples.splice(1, this.samples.length - this.maxSamples);
    return horizon;
  }

  close(): Promise<void> {
    return this.offsets.close();
  }
}
