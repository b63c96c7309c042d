import fc from 'fast-check';
import { FuzzService, RawRequest } from './http';
import {
  BodyPlan,
  authorization,
  bodyPlan,
  extraHeaders,
  mutated,
  pathSegment,
  pspSignature,
  queryString,
} from './arbitraries';

/** Real rows the fuzz aims at besides random ids, so that "changes nothing" is checked on existing state too. */
export interface KnownEntities {
  sku: string;
  orderId: string;
  voucherCode: string;
}

/** One HTTP endpoint and how to build odd requests for it. */
export interface Endpoint {
  service: FuzzService;
  method: string;
  /** The route as documented, for the test name. */
  route: string;
  request: (known: KnownEntities) => fc.Arbitrary<RawRequest>;
}

/** A GET-like request: tenant headers, a path, sometimes a body nobody asked for. */
const noBody = fc.oneof(
  { weight: 6, arbitrary: fc.constant<BodyPlan>({ headers: {} }) },
  { weight: 1, arbitrary: bodyPlan(fc.jsonValue({ maxDepth: 2 })) },
);

/** A request with a body near `valid` (or any JSON) and the tenant headers. */
const withBody = (valid: unknown) =>
  bodyPlan(
    fc.oneof(
      { weight: 4, arbitrary: mutated(valid) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    ),
  );

function build(
  service: FuzzService,
  method: string,
  path: fc.Arbitrary<string>,
  body: fc.Arbitrary<BodyPlan>,
  headers: fc.Arbitrary<Record<string, string>> = fc.constant({}),
): fc.Arbitrary<RawRequest> {
  return fc.tuple(path, authorization, extraHeaders, headers, body).map(([p, auth, extra, own, plan]) => ({
    service,
    method,
    path: p,
    headers: { ...extra, ...auth, ...own, ...plan.headers },
    body: plan.body,
  }));
}

/** The Idempotency-Key header of a checkout: fresh keys mostly, odd ones and none sometimes. */
const idempotencyKey = fc.oneof(
  { weight: 4, arbitrary: fc.uuid().map((k) => ({ 'idempotency-key': k })) },
  { weight: 1, arbitrary: fc.constant({}) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('', ' ', 'k'.repeat(256), 'has space', 'tab\tkey', '\u00e9t\u00e9', 'k'.repeat(255))
      .map((k) => ({ 'idempotency-key': k })),
  },
);

const checkoutBody = (known: KnownEntities) => ({
  customerId: 'fuzz-customer',
  currency: 'VND',
  lines: [{ sku: known.sku, quantity: 1, unitPrice: 50_000 }],
  voucherCode: known.voucherCode,
  payment: { token: 'tok_decline' },
});

/** A PSP charge event as the simulator sends it, for the webhook's near-valid bodies. */
const chargeEvent = (known: KnownEntities) => ({
  id: `evt_fuzz_${known.orderId}`,
  type: 'charge.succeeded',
  created: Math.floor(Date.now() / 1000),
  account: 'acct_acme',
  data: {
    object: {
      id: `ch_fuzz_${known.orderId}`,
      reference: known.orderId,
      status: 'succeeded',
      failureCode: null,
      metadata: { paymentId: known.orderId },
    },
  },
});

/**
 * A webhook: mostly correctly signed with the acme account's secret (so the body reaches validation), else
 * signed with a stale timestamp, the wrong secret, a malformed header or no header at all.
 */
const webhook = (known: KnownEntities): fc.Arbitrary<RawRequest> =>
  fc
    .tuple(
      fc.oneof(
        { weight: 4, arbitrary: mutated(chargeEvent(known)) },
        { weight: 1, arbitrary: fc.jsonValue() },
      ),
      fc.constantFrom('valid', 'valid', 'valid', 'stale', 'wrong-secret', 'malformed', 'none'),
      extraHeaders,
    )
    .map(([event, signing, extra]) => {
      const body = Buffer.from(JSON.stringify(event) ?? 'null', 'utf8');
      const now = Math.floor(Date.now() / 1000);
      const signature =
        signing === 'valid'
          ? pspSignature('whsec_acme_dev_0123456789', body, now)
          : signing === 'stale'
            ? pspSignature('whsec_acme_dev_0123456789', body, now - 3_600)
            : signing === 'wrong-secret'
              ? pspSignature('whsec_globex_dev_0123456789', body, now)
              : signing === 'malformed'
                ? `t=${now},v1=zz`
                : undefined;
      return {
        service: 'payment' as const,
        method: 'POST',
        path: '/v1/psp/webhooks',
        headers: {
          ...extra,
          'content-type': 'application/json',
          ...(signature ? { 'psp-signature': signature } : {}),
        },
        body,
      };
    });

const uuidOr = (known: readonly string[]) =>
  fc.oneof({ weight: 2, arbitrary: fc.uuid() }, { weight: 3, arbitrary: pathSegment(known) });

/** Every HTTP endpoint of every service (PRODUCT.md section 4 and the operators' endpoints). */
export const ENDPOINTS: Endpoint[] = [
  {
    service: 'order',
    method: 'PUT',
    route: '/v1/admin/prices/{sku}',
    request: (k) =>
      build(
        'order',
        'PUT',
        pathSegment([k.sku]).map((s) => `/v1/admin/prices/${s}`),
        withBody({ unitPrice: 50_000, currency: 'VND' }),
      ),
  },
  {
    service: 'order',
    method: 'POST',
    route: '/v1/admin/vouchers',
    request: (k) =>
      build(
        'order',
        'POST',
        fc.constant('/v1/admin/vouchers'),
        withBody({ code: k.voucherCode, percentOff: 10, maxRedemptions: 5 }),
      ),
  },
  {
    service: 'order',
    method: 'PUT',
    route: '/v1/admin/flash-sales/{sku}',
    request: (k) =>
      build(
        'order',
        'PUT',
        pathSegment([k.sku]).map((s) => `/v1/admin/flash-sales/${s}`),
        withBody({ enabled: false, available: 3 }),
      ),
  },
  {
    service: 'order',
    method: 'POST',
    route: '/v1/checkout',
    request: (k) =>
      build('order', 'POST', fc.constant('/v1/checkout'), withBody(checkoutBody(k)), idempotencyKey),
  },
  {
    service: 'order',
    method: 'GET',
    route: '/v1/orders/{orderId}',
    request: (k) =>
      build(
        'order',
        'GET',
        uuidOr([k.orderId]).map((s) => `/v1/orders/${s}`),
        noBody,
      ),
  },
  {
    service: 'order',
    method: 'POST',
    route: '/v1/orders/{orderId}/cancel',
    request: (k) =>
      build(
        'order',
        'POST',
        uuidOr([k.orderId]).map((s) => `/v1/orders/${s}/cancel`),
        noBody,
      ),
  },
  {
    service: 'inventory',
    method: 'PUT',
    route: '/v1/admin/stock/{sku}',
    request: (k) =>
      build(
        'inventory',
        'PUT',
        pathSegment([k.sku]).map((s) => `/v1/admin/stock/${s}`),
        withBody({ available: 5, allowBackorder: false, reservationTtlSeconds: 600 }),
      ),
  },
  {
    service: 'inventory',
    method: 'GET',
    route: '/v1/stock/{sku}',
    request: (k) =>
      build(
        'inventory',
        'GET',
        pathSegment([k.sku]).map((s) => `/v1/stock/${s}`),
        noBody,
      ),
  },
  {
    service: 'payment',
    method: 'GET',
    route: '/v1/payments?orderId=',
    request: (k) =>
      build(
        'payment',
        'GET',
        queryString(['orderId'], [k.orderId]).map((q) => `/v1/payments${q}`),
        noBody,
      ),
  },
  {
    service: 'payment',
    method: 'GET',
    route: '/v1/payments/refunds?state=',
    request: () =>
      build(
        'payment',
        'GET',
        queryString(['state'], ['pending', 'succeeded', 'refund_failed']).map(
          (q) => `/v1/payments/refunds${q}`,
        ),
        noBody,
      ),
  },
  {
    service: 'payment',
    method: 'POST',
    route: '/v1/payments/refunds/{refundId}/retry',
    request: (k) =>
      build(
        'payment',
        'POST',
        uuidOr([k.orderId]).map((s) => `/v1/payments/refunds/${s}/retry`),
        noBody,
      ),
  },
  {
    service: 'payment',
    method: 'GET',
    route: '/v1/payments/orphan-charges',
    request: () =>
      build(
        'payment',
        'GET',
        queryString(['limit']).map((q) => `/v1/payments/orphan-charges${q}`),
        noBody,
      ),
  },
  {
    service: 'payment',
    method: 'POST',
    route: '/v1/psp/webhooks (signed)',
    request: webhook,
  },
  {
    service: 'payment',
    method: 'POST',
    route: '/v1/psp/webhooks (any body)',
    request: (k) =>
      build(
        'payment',
        'POST',
        fc.constant('/v1/psp/webhooks'),
        withBody(chargeEvent(k)),
        fc.string({ maxLength: 120, unit: 'grapheme-ascii' }).map((s) => ({ 'psp-signature': s })),
      ),
  },
  {
    service: 'fulfillment',
    method: 'GET',
    route: '/v1/shipments?orderId=',
    request: (k) =>
      build(
        'fulfillment',
        'GET',
        queryString(['orderId'], [k.orderId]).map((q) => `/v1/shipments${q}`),
        noBody,
      ),
  },
  {
    service: 'fulfillment',
    method: 'GET',
    route: '/v1/notifications?orderId=',
    request: (k) =>
      build(
        'fulfillment',
        'GET',
        queryString(['orderId'], [k.orderId]).map((q) => `/v1/notifications${q}`),
        noBody,
      ),
  },
  {
    service: 'saga-tracker',
    method: 'GET',
    route: '/v1/sagas?stuck=&waitingFor=&limit=',
    request: () =>
      build(
        'saga-tracker',
        'GET',
        queryString(['stuck', 'waitingFor', 'limit'], ['payment', '500', '0']).map((q) => `/v1/sagas${q}`),
        noBody,
      ),
  },
  {
    service: 'saga-tracker',
    method: 'GET',
    route: '/v1/sagas/{orderId}',
    request: (k) =>
      build(
        'saga-tracker',
        'GET',
        uuidOr([k.orderId]).map((s) => `/v1/sagas/${s}`),
        noBody,
      ),
  },
  {
    service: 'saga-tracker',
    method: 'GET',
    route: '/sagas/{orderId} (page)',
    request: (k) =>
      build(
        'saga-tracker',
        'GET',
        uuidOr([k.orderId]).map((s) => `/sagas/${s}`),
        noBody,
      ),
  },
  {
    service: 'psp-simulator',
    method: 'POST',
    route: '/v1/charges',
    request: (k) =>
      build(
        'psp-simulator',
        'POST',
        fc.constant('/v1/charges'),
        withBody({ amount: 50_000, currency: 'VND', token: 'tok_decline', reference: `fuzz-${k.orderId}` }),
        fc.oneof(idempotencyKey, fc.constant({ authorization: 'Bearer sk_test_acme_dev_0123456789' })),
      ),
  },
  {
    service: 'psp-simulator',
    method: 'GET',
    route: '/v1/charges?reference=&from=&to=&limit=',
    request: () =>
      build(
        'psp-simulator',
        'GET',
        queryString(['reference', 'from', 'to', 'limit'], ['2026-01-01T00:00:00Z']).map(
          (q) => `/v1/charges${q}`,
        ),
        noBody,
        fc.constantFrom<Record<string, string>>({}, { authorization: 'Bearer sk_test_acme_dev_0123456789' }),
      ),
  },
  {
    service: 'psp-simulator',
    method: 'POST',
    route: '/v1/refunds',
    request: (k) =>
      build(
        'psp-simulator',
        'POST',
        fc.constant('/v1/refunds'),
        withBody({ charge: `ch_fuzz_${k.orderId}`, amount: 1, reason: 'fuzz' }),
        fc.oneof(idempotencyKey, fc.constant({ authorization: 'Bearer sk_test_acme_dev_0123456789' })),
      ),
  },
  {
    service: 'psp-simulator',
    method: 'GET',
    route: '/v1/_ledger?reference=',
    request: (k) =>
      build(
        'psp-simulator',
        'GET',
        queryString(['reference'], [k.orderId]).map((q) => `/v1/_ledger${q}`),
        noBody,
      ),
  },
  {
    service: 'psp-simulator',
    method: 'PUT',
    route: '/v1/_admin/knobs',
    request: () =>
      build(
        'psp-simulator',
        'PUT',
        fc.constant('/v1/_admin/knobs'),
        // Never a valid errorRate or latency: the knobs are shared with every other spec of the run.
        withBody({ latencyMs: -1, jitterMs: 'slow', errorRate: 2, errorMode: 'sometimes' }),
      ),
  },
  {
    service: 'psp-simulator',
    method: 'POST',
    route: '/v1/_admin/faults',
    request: (k) =>
      build(
        'psp-simulator',
        'POST',
        fc.constant('/v1/_admin/faults'),
        withBody({ reference: `fuzz-${k.orderId}`, operation: 'charge', status: 503, times: 1 }),
      ),
  },
  {
    service: 'psp-simulator',
    method: 'DELETE',
    route: '/v1/_admin/faults?reference=',
    request: (k) =>
      build(
        'psp-simulator',
        'DELETE',
        queryString(['reference'], [`fuzz-${k.orderId}`]).map((q) => `/v1/_admin/faults${q}`),
        noBody,
      ),
  },
];

/** A route no service has, or a method a route does not take: 404/405 with the error shape. */
export const unknownRoute = (service: FuzzService): fc.Arbitrary<RawRequest> =>
  build(
    service,
    'GET',
    fc.array(pathSegment(), { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join('/')}`),
    noBody,
  ).chain((req) =>
    fc
      .constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD')
      .map((method) => ({ ...req, method })),
  );
