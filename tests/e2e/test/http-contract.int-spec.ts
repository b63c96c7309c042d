import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiService, ErrorBody, OPENAPI_PATH, SERVICE_APIS } from '@checkout/contracts';
import { loadStackConfig } from '@checkout/testing';
import { TENANT_KEYS, request } from '../src';

const stack = loadStackConfig();
const services = Object.keys(SERVICE_APIS) as ApiService[];
const apiUrl = (service: string) => `http://127.0.0.1:${stack.servicePorts[service]}`;
// The repository root (this spec runs from tests/e2e/test under jest).
const committed = (service: ApiService) =>
  JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'docs', 'openapi', `${service}.json`), 'utf8'));

type Responses = Record<string, { content?: Record<string, { schema?: { allOf?: unknown[] } }> }>;
/** The error codes the committed OpenAPI document lists for an operation under a status. */
function documented(service: ApiService, method: string, path: string, status: number): string[] {
  const op = (committed(service).paths as Record<string, Record<string, { responses: Responses }>>)[path][
    method
  ];
  const schema = op.responses[String(status)]?.content?.['application/json']?.schema;
  const first = schema?.allOf?.[0] as { properties?: { error?: { enum?: string[] } } } | undefined;
  return first?.properties?.error?.enum ?? [];
}

describe('the public HTTP contract of the running services', () => {
  it.each(services)(
    '%s serves its committed OpenAPI document at /docs/openapi.json, without a key',
    async (service) => {
      const answer = await request('GET', `${apiUrl(service)}${OPENAPI_PATH}`);
      assert.equal(answer.status, 200, answer.text.slice(0, 300));
      assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(answer.json, committed(service));
    },
  );

  it('answers each refusal with a code its OpenAPI operation lists under that status', async () => {
    const key = TENANT_KEYS.acme;
    const cases: {
      service: ApiService;
      method: string;
      path: string;
      url: string;
      init?: Parameters<typeof request>[2];
      status: number;
      code: string;
    }[] = [
      {
        service: 'order',
        method: 'post',
        path: '/v1/checkout',
        url: '/v1/checkout',
        init: { body: {} },
        status: 401,
        code: 'UNAUTHENTICATED',
      },
      {
        service: 'order',
        method: 'post',
        path: '/v1/checkout',
        url: '/v1/checkout',
        init: {
          key,
          body: { customerId: 'x'.repeat(100_000) },
          headers: { 'idempotency-key': randomUUID() },
        },
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
      },
      {
        service: 'order',
        method: 'post',
        path: '/v1/checkout',
        url: '/v1/checkout',
        init: { key, body: { lines: [] }, headers: { 'idempotency-key': randomUUID() } },
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        service: 'order',
        method: 'get',
        path: '/v1/orders/{orderId}',
        url: `/v1/orders/${randomUUID()}`,
        init: { key },
        status: 404,
        code: 'ORDER_NOT_FOUND',
      },
      {
        service: 'inventory',
        method: 'get',
        path: '/v1/stock/{sku}',
        url: '/v1/stock/NO-SUCH-SKU-H17',
        init: { key },
        status: 404,
        code: 'UNKNOWN_SKU',
      },
      {
        service: 'payment',
        method: 'get',
        path: '/v1/payments',
        url: '/v1/payments?orderId=nope',
        init: { key },
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        service: 'payment',
        method: 'post',
        path: '/v1/psp/webhooks',
        url: '/v1/psp/webhooks',
        init: { body: { id: 'evt_1', account: 'acct_acme', type: 'charge.succeeded' } },
        status: 401,
        code: 'WEBHOOK_UNAUTHENTICATED',
      },
      {
        service: 'fulfillment',
        method: 'get',
        path: '/v1/shipments',
        url: '/v1/shipments',
        init: { key },
        status: 400,
        code: 'VALIDATION_FAILED',
      },
      {
        service: 'saga-tracker',
        method: 'get',
        path: '/v1/sagas/{orderId}',
        url: `/v1/sagas/${randomUUID()}`,
        init: { key },
        status: 404,
        code: 'SAGA_NOT_FOUND',
      },
    ];
    for (const c of cases) {
      const answer = await request(c.method.toUpperCase(), `${apiUrl(c.service)}${c.url}`, c.init);
      const what = `${c.service} ${c.method.toUpperCase()} ${c.url}`;
      assert.equal(answer.status, c.status, `${what}: ${answer.text.slice(0, 300)}`);
      const body = ErrorBody.parse(answer.json);
      assert.equal(body.error, c.code, what);
      assert.ok(
        documented(c.service, c.method, c.path, c.status).includes(body.error),
        `${what}: ${body.error} is not listed under ${c.status} in docs/openapi/${c.service}.json`,
      );
    }
  });
});
