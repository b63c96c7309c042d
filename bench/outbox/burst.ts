import { randomUUID } from 'node:crypto';
import { loadStackConfig, stackKafka } from '@checkout/local-stack';
import { serviceDataSource } from '@checkout/testing';
import { report } from '../report';

/**
 * Throughput of the outbox relay in a burst: N outbox rows committed in one transaction of the order database
 * (topic `bench.burst`, which no service consumes), and the time from that commit until a kafkajs consumer has
 * seen all N. It shows what the connector's batch settings (`max.batch.size`, `poll.interval.ms`) cost when a
 * flash sale writes many events at once. Run: node bench/dist/outbox/burst.js [count] [rounds] (stack up).
 */
async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 2000);
  const rounds = Number(process.argv[3] ?? 3);
  const kafka = stackKafka(loadStackConfig(), 'bench-burst');
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'bench.burst', numPartitions: 3 }] });
  await admin.disconnect();
  const consumer = kafka.consumer({ groupId: `bench-burst-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topics: ['bench.burst'], fromBeginning: false });
  const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  let run = '';
  let seen = 0;
  let allSeen = () => undefined as void;
  await consumer.run({
    eachMessage: async ({ message }) => {
      if (message.key?.toString().startsWith(run) && ++seen === count) allSeen();
    },
  });
  await joined;
  const orderDb = await serviceDataSource('order_svc', 1);
  const rows: { round: number; n: number; ms: number; perSecond: number }[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    run = `${randomUUID()}:`;
    seen = 0;
    const done = new Promise<void>((resolve) => (allSeen = resolve));
    await orderDb.query(
      `INSERT INTO outbox (id, aggregate_type, aggregate_id, type, version, tenant_id, saga_id, correlation_id,
                           sequence, payload)
       SELECT gen_random_uuid(), 'bench', $1 || i, 'bench.burst', 1, 'bench', gen_random_uuid(), 'bench', 1,
              '{"bench": true}'::jsonb
         FROM generate_series(1, $2) i`,
      [run, count],
    );
    const committed = performance.now();
    await Promise.race([
      done,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`only ${seen} of ${count} seen`)), 60_000),
      ),
    ]);
    const ms = performance.now() - committed;
    rows.push({ round, n: count, ms: +ms.toFixed(0), perSecond: Math.round((count / ms) * 1000) });
  }
  report('outbox-burst', rows, {});
  await consumer.disconnect();
  await orderDb.destroy();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
