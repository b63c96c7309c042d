import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, down, up } from '@checkout/local-stack';
import { SAGA_TOPICS } from '@checkout/contracts';
import { OutboxWriter } from '@checkout/messaging';
import { TopicReader, orderCreatedPayload, serviceDataSource } from '@checkout/testing';

/** Prints a dot every second while a long step runs, so a person sees it is alive. */
async function withProgress<T>(label: string, work: Promise<T>): Promise<T> {
  process.stdout.write(`${label} `);
  const timer = setInterval(() => process.stdout.write('.'), 1000);
  try {
    return await work;
  } finally {
    clearInterval(timer);
    process.stdout.write('\n');
  }
}

/** The outbox round trip: commit an order.created in the order DB, watch it and the saga's reactions on Kafka. */
async function outboxRoundTrip(): Promise<void> {
  const reader = await new TopicReader([...SAGA_TOPICS]).start();
  const orderDb = await serviceDataSource('order_svc');
  const payload = orderCreatedPayload({ customerId: 'demo-customer' });
  const committedAt = Date.now();
  const event = await orderDb.transaction((tx) =>
    new OutboxWriter('order').append(tx, {
      type: 'order.created',
      tenantId: 'acme',
      sagaId: payload.orderId,
      payload,
    }),
  );
  const [first] = await reader.waitFor((m) => m.headers.eventId === event.eventId, { timeoutMs: 30_000 });
  const latency = Date.now() - committedAt;
  // Give the services a moment to react, then show what the saga did so far.
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  const saga = reader.matching((m) => m.key === payload.orderId).sort((a, b) => a.timestamp - b.timestamp);
  console.log(
    `\norder.created ${event.eventId} committed to the order DB outbox; on Kafka after ${latency} ms`,
  );
  console.log(`  topic=${first.topic} partition=${first.partition} key=${first.key}`);
  console.log(`  headers=${JSON.stringify(first.headers)}`);
  console.log(`\nevents of saga ${payload.orderId} seen on Kafka:`);
  console.table(
    saga.map((m) => ({
      at: `+${m.timestamp - first.timestamp} ms`,
      topic: m.topic,
      sequence: m.headers.sequence,
      causationId: m.headers.causationId || '-',
      tenant: m.headers.tenantId,
    })),
  );
  await reader.stop();
  await orderDb.destroy();
}

async function main(): Promise<void> {
  const started = Date.now();
  const wasUp = existsSync(join(REPO_ROOT, '.stack', 'run', 'kafka.pid'));
  const timings = await withProgress(
    'starting the local stack (PostgreSQL, Redis, Kafka, Connect + Debezium, 5 services)',
    up({ log: () => undefined }),
  );
  console.log(`stack up in ${(timings.total / 1000).toFixed(1)} s ${JSON.stringify(timings)}`);
  try {
    await outboxRoundTrip();
  } finally {
    if (!wasUp)
      await withProgress(
        'stopping the stack',
        down(() => undefined),
      );
  }
  console.log(`\ndemo finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((error: unknown) => {
  console.error((error as Error).message ?? error);
  process.exitCode = 1;
});
