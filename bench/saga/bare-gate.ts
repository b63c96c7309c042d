import Fastify from 'fastify';
import { randomUUID } from 'node:crypto';
import { StockGate } from '@checkout/stock-gate';

/**
 * The baseline of issue 16's HTTP-path ratio: a bare Fastify route doing the checkout's one Redis call, the
 * gate's take (the same EVALSHA on the same keys), answering 409 or 202 with a small JSON body. No auth, no
 * validation, no idempotency, no logs, no traces: what the order service's refusal would cost with nothing else.
 * argv: <port> <redis url>.
 */
async function main(): Promise<void> {
  const [port, redisUrl] = process.argv.slice(2);
  const gate = StockGate.connect(redisUrl);
  await gate.ready(5_000);
  const app = Fastify({ logger: false });
  app.post('/take', async (req, reply) => {
    const { tenantId, sku } = req.body as { tenantId: string; sku: string };
    const take = await gate.take(tenantId, randomUUID(), [{ sku, quantity: 1 }]);
    if (take.outcome === 'Insufficient')
      return reply.code(409).send({ error: 'OUT_OF_STOCK', sku: take.sku, remaining: take.remaining });
    return reply.code(202).send({ outcome: take.outcome });
  });
  await app.listen({ port: Number(port), host: '127.0.0.1' });
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
