import { afterAll, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Server, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { DEV_PSP_CREDENTIALS, PspCredentialRegistry } from '@checkout/service-kit';
import { loadPaymentConfig } from '../../config/payment.config';
import { PaymentMetrics } from '../payment.metrics';
import { PspClient } from './psp.client';

const charge = {
  id: 'ch_1',
  amount: 500,
  currency: 'VND',
  reference: 'order-1',
  metadata: { paymentId: 'p' },
  status: 'succeeded',
  failureCode: null,
  refunded: false,
  amountRefunded: 0,
  createdAt: '2026-12-02T10:00:00.000Z',
};

/** A PSP that answers each reference as scripted, counting the requests. */
const answers: Record<string, [number, string]> = {
  good: [201, JSON.stringify(charge)],
  'bad-status': [201, JSON.stringify({ ...charge, status: 'paid' })],
  'missing-id': [201, JSON.stringify({ ...charge, id: undefined })],
  declined: [402, JSON.stringify({ error: 'CARD_DECLINED', message: 'declined' })],
  'odd-error': [400, JSON.stringify({ error: 42 })],
};
const requests: Record<string, number> = {};
const authorizations = new Set<string>();

describe('PspClient: every PSP answer is validated before it is believed', () => {
  let server: Server;
  let client: PspClient;
  let registry: Registry;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        authorizations.add(req.headers.authorization ?? '');
        const reference = (JSON.parse(body) as { reference: string }).reference;
        requests[reference] = (requests[reference] ?? 0) + 1;
        const [status, text] = answers[reference];
        res.writeHead(status, { 'content-type': 'application/json' }).end(text);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const config = loadPaymentConfig({
      SERVICE_NAME: 'payment',
      PORT: '3003',
      KAFKA_BROKERS: 'unused:9092',
      DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/x',
      PSP_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      PAYMENT_PSP_RETRIES: '1',
      PAYMENT_BREAKER_THRESHOLD: '100',
    });
    registry = new Registry();
    client = new PspClient(
      config,
      new PaymentMetrics(registry),
      new PspCredentialRegistry(DEV_PSP_CREDENTIALS),
    );
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const charge$ = (reference: string) =>
    client.charge('acct_acme', `key-${reference}`, {
      amount: 500,
      currency: 'VND',
      token: 'tok_success',
      reference,
      metadata: {},
    });

  it('accepts a well-formed charge', async () => {
    const r = await charge$('good');
    assert.equal(r.kind, 'ok');
    assert.equal(r.kind === 'ok' && r.value.status, 'succeeded');
  });

  it('treats a 2xx it cannot read as no answer (unknown), asked again with the same key', async () => {
    for (const reference of ['bad-status', 'missing-id']) {
      const r = await charge$(reference);
      assert.deepEqual(
        r,
        { kind: 'unavailable', reason: 'PSP answered 201 with an unexpected body' },
        reference,
      );
      assert.equal(requests[reference], 2, `${reference}: one retry`);
    }
  });

  it('reads a refusal code when there is one, and falls back to the status when not', async () => {
    assert.deepEqual(await charge$('declined'), {
      kind: 'rejected',
      status: 402,
      code: 'CARD_DECLINED',
      message: 'declined',
    });
    assert.deepEqual(await charge$('odd-error'), {
      kind: 'rejected',
      status: 400,
      code: 'HTTP_400',
      message: '',
    });
  });

  it('sends the account secret key only as the bearer credential; labels and calls use the public id', async () => {
    assert.deepEqual([...authorizations], [`Bearer ${DEV_PSP_CREDENTIALS[0].secretKey}`]);
    const metrics = await registry.metrics();
    assert.ok(!metrics.includes(DEV_PSP_CREDENTIALS[0].secretKey), 'no secret key on /metrics');
  });

  it('does not call the PSP for an account it has no credentials for (unknown, nothing sent)', async () => {
    const before = Object.values(requests).reduce((a, b) => a + b, 0);
    const r = await client.charge('acct_nobody', 'key-x', {
      amount: 1,
      currency: 'VND',
      token: 'tok_success',
      reference: 'good',
      metadata: {},
    });
    assert.deepEqual(r, { kind: 'unavailable', reason: 'no credentials for PSP account acct_nobody' });
    assert.equal(
      Object.values(requests).reduce((a, b) => a + b, 0),
      before,
    );
  });
});
