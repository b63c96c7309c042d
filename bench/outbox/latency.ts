import { ensureTopics, loadStackConfig, stackKafka } from '@checkout/local-stack';
import { OutboxWriter } from '@checkout/messaging';
import { TopicReader, orderCreatedPayload, serviceDataSource } from '@checkout/testing';
import { percentile, report } from '../report';

/**
 * Commit-to-consume latency of the outbox relay: an event committed in the order DB, relayed by Debezium,
 * seen by a kafkajs consumer. Baseline in the same run: a plain kafkajs produce-to-consume round trip.
 * Run: node bench/dist/outbox/latency.js [count] (the stack must be up: npm run up).
 */
async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 100);
  await ensureTopics(loadStackConfig(), ['bench.baseline']);
  const reader = await new TopicReader(['order.created', 'bench.baseline']).start();
  const orderDb = await serviceDataSource('order_svc');
  const writer = new OutboxWriter('order');
  const producer = stackKafka(loadStackConfig(), 'bench').producer();
  await producer.connect();

  const relay: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < count; i++) {
    const payload = orderCreatedPayload({ customerId: 'bench' });
    const event = await orderDb.transaction((tx) =>
      writer.append(tx, { type: 'order.created', tenantId: 'acme', sagaId: payload.orderId, payload }),
    );
    const committed = performance.now();
    await reader.waitFor((m) => m.headers.eventId === event.eventId, { timeoutMs: 30_000 });
    relay.push(performance.now() - committed);

    const id = `${i}-${Date.now()}`;
    const s0 = performance.now();
    await producer.send({ topic: 'bench.baseline', messages: [{ key: id, value: id }] });
    await reader.waitFor((m) => m.topic === 'bench.baseline' && m.key === id, { timeoutMs: 30_000 });
    direct.push(performance.now() - s0);
  }
  const row = (name: string, xs: number[]) => ({
    path: name,
    n: xs.length,
    p50_ms: +percentile(xs, 50).toFixed(1),
    p90_ms: +percentile(xs, 90).toFixed(1),
    p99_ms: +percentile(xs, 99).toFixed(1),
  });
  const rows = [
    row('outbox commit -> Debezium -> consumer', relay),
    row('baseline: kafkajs produce -> consumer', direct),
  ];
  report('outbox-latency', rows, { ratio_p50: +(percentile(relay, 50) / percentile(direct, 50)).toFixed(2) });
  console.log(`median ratio relay/direct: ${(percentile(relay, 50) / percentile(direct, 50)).toFixed(2)}x`);
  await producer.disconnect();
  await reader.stop();
  await orderDb.destroy();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
