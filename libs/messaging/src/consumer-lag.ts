import { Gauge, Registry } from 'prom-client';
import { dlqTopic } from '@checkout/contracts';
import { KafkaSecurity } from './kafka';
import { KafkaOffsetReader, PartitionCommit, PartitionEnds } from './kafka-offsets';
import { consumerLagGauge, dlqDepthGauge } from './metrics';

/**
 * Messages of a topic not yet consumed by the group: per partition the high watermark minus the committed
 * offset, or minus the low watermark where the group has not committed yet (it starts from the beginning).
 */
export function topicLag(ends: PartitionEnds[], commits: PartitionCommit[]): number {
  const committed = new Map(commits.map((c) => [c.partition, Number(c.offset)]));
  return ends.reduce((sum, p) => {
    const high = Number(p.high);
    const low = Number(p.low);
    const at = committed.get(p.partition) ?? -1;
    const from = at >= 0 ? Math.max(at, low) : low;
    return sum + Math.max(0, high - from);
  }, 0);
}

/** Messages currently held by a topic (the parked messages of a dead-letter topic). */
export const topicDepth = (ends: PartitionEnds[]): number =>
  ends.reduce((sum, p) => sum + Math.max(0, Number(p.high) - Number(p.low)), 0);

export interface ConsumerLagProbe {
  lag: Record<string, number>;
  dlq: Record<string, number>;
}

/**
 * Reads, through the Kafka admin API, how far a consumer group is behind on each of its topics and how many
 * messages sit on their dead-letter topics, and publishes both as gauges.
 */
export class ConsumerLagMonitor {
  private readonly offsets: KafkaOffsetReader;
  /** Whether this monitor made its reader (and closes it), or shares its service's. */
  private readonly ownsReader: boolean;
  private readonly lagGauge?: Gauge<'consumer' | 'topic'>;
  private readonly dlqGauge?: Gauge<'topic'>;

  constructor(
    private readonly options: {
      groupId: string;
      topics: string[];
      brokers: string[];
      security?: KafkaSecurity;
      registry?: Registry;
      /** The service's reader, shared by its groups; without one the monitor makes its own. */
      offsets?: KafkaOffsetReader;
    },
  ) {
    this.ownsReader = !options.offsets;
    this.offsets =
      options.offsets ??
      new KafkaOffsetReader(options.brokers, `${options.groupId}-lag-monitor`, options.security);
    if (options.registry) {
      // A service may run several consumer groups (e.g. a batched one next to the per-event one): one gauge.
      this.lagGauge = consumerLagGauge(options.registry);
      this.dlqGauge = dlqDepthGauge(options.registry);
    }
  }

  /** One OffsetFetch for the group, and one ListOffsets pair for its topics and their dead-letter topics. */
  async probe(): Promise<ConsumerLagProbe> {
    const { groupId, topics } = this.options;
    const [commits, ends] = await Promise.all([
      this.offsets.committed(groupId, topics),
      this.offsets.ends([...topics, ...topics.map(dlqTopic)]),
    ]);
    const probe: ConsumerLagProbe = { lag: {}, dlq: {} };
    for (const topic of topics) {
      probe.lag[topic] = topicLag(ends.get(topic) ?? [], commits.get(topic) ?? []);
      this.lagGauge?.set({ consumer: groupId, topic }, probe.lag[topic]);
      const dlq = dlqTopic(topic);
      probe.dlq[dlq] = topicDepth(ends.get(dlq) ?? []);
      this.dlqGauge?.set({ topic: dlq }, probe.dlq[dlq]);
    }
    return probe;
  }

  async close(): Promise<void> {
    if (this.ownsReader) await this.offsets.close();
  }
}
