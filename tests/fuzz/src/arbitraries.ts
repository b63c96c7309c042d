import { createHmac } from 'node:crypto';
import { gzipSync, deflateSync } from 'node:zlib';
import fc from 'fast-check';

/** Dev API keys of the seed tenants, and keys that are not one. */
export const TENANT_KEYS = ['acme-dev-key', 'globex-dev-key'] as const;

/** Header values node:http can send (no control characters). */
const headerText = (maxLength: number) =>
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c === 0x7f ? 0x20 : c)),
    maxLength,
  });

/** An Authorization header: a seed tenant's key (mostly), none, an unknown key or a malformed one. */
export const authorization: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...TENANT_KEYS).map((k) => ({ authorization: `Bearer ${k}` })) },
  { weight: 1, arbitrary: fc.constant({}) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        'Bearer ',
        'Bearer nope',
        'acme-dev-key',
        'bearer acme-dev-key',
        'Bearer acme-dev-key extra',
        'Basic YWNtZTphY21l',
        'Bearer ACME-DEV-KEY',
      )
      .map((a) => ({ authorization: a })),
  },
  { weight: 1, arbitrary: headerText(300).map((a) => ({ authorization: a })) },
);

/** Extra request headers a client might send, sane or not. */
export const extraHeaders: fc.Arbitrary<Record<string, string>> = fc.dictionary(
  fc.constantFrom(
    'accept',
    'accept-encoding',
    'x-tenant-id',
    'x-forwarded-for',
    'traceparent',
    'idempotency-key',
    'if-none-match',
    'origin',
    'x-http-method-override',
  ),
  headerText(200),
  { maxKeys: 3 },
);

/**
 * A path segment: mostly a random value percent-encoded as a client would send it, sometimes one of the raw
 * shapes that break naive decoders (bad escapes, NUL, traversal, very long).
 */
export const pathSegment = (known: readonly string[] = []): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: 80 }).map((s) => encodeURIComponent(s) || 'x') },
    {
      weight: 2,
      arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => encodeURIComponent(s) || 'y'),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '%',
        '%ZZ',
        '%E0%A4%A',
        '%00',
        '%C0%AF',
        '..%2F..%2Fetc%2Fpasswd',
        '%2e%2e',
        'a%2Fb',
        '%FF%FE',
        '%u0041',
        'null',
        'undefined',
        '00000000-0000-0000-0000-000000000000',
        'SKU-1',
        '__proto__',
        'constructor',
      ),
    },
    { weight: 1, arbitrary: fc.integer({ min: 256, max: 9000 }).map((n) => 'A'.repeat(n)) },
    ...(known.length ? [{ weight: 3, arbitrary: fc.constantFrom(...known) }] : []),
  );

/** A query string: random pairs plus the named parameters given odd values (arrays, nested, repeated). */
export const queryString = (
  names: readonly string[],
  known: readonly string[] = [],
): fc.Arbitrary<string> => {
  const value = fc.oneof(
    fc.string({ maxLength: 60 }).map(encodeURIComponent),
    fc.constantFrom(
      '%',
      '%ZZ',
      '',
      'true',
      '1e9',
      '-1',
      '0',
      '99999999999999999999',
      ...known.map(encodeURIComponent),
    ),
  );
  const name = fc.oneof(
    fc.constantFrom(...names, ...names.map((n) => `${n}[]`), ...names.map((n) => `${n}[a]`), '__proto__[x]'),
    fc.string({ maxLength: 20 }).map(encodeURIComponent),
  );
  return fc
    .array(fc.tuple(name, value), { maxLength: 4 })
    .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : ''));
};

/** A JSON value that is not the object an endpoint expects: any shape at all. */
const anyJson = fc.jsonValue({ maxDepth: 3 });

/** Values that break number, string and boolean fields in many ways. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    '',
    ' ',
    -1,
    0,
    1.5,
    1e308,
    -0,
    Number.MAX_SAFE_INTEGER + 2,
    '1',
    'true',
    true,
    false,
    [],
    {},
    'x'.repeat(2000),
    '\u0000',
    'DROP TABLE x; --',
    '__proto__',
  ),
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.double(),
  anyJson,
);

/**
 * A body near a valid one: each field kept, dropped or replaced by an odd value, nested objects and arrays
 * mutated the same way, plus sometimes an unknown key.
 */
export function mutated(valid: unknown, depth = 0): fc.Arbitrary<unknown> {
  if (Array.isArray(valid))
    return fc.oneof(fc.array(mutated(valid[0], depth + 1), { maxLength: depth === 0 ? 120 : 3 }), oddValue);
  if (valid !== null && typeof valid === 'object') {
    const entries = Object.entries(valid as Record<string, unknown>);
    return fc
      .tuple(
        ...entries.map(([, v]) =>
          fc.oneof(
            { weight: 3, arbitrary: fc.constant<unknown>(v) },
            { weight: 1, arbitrary: fc.constant<unknown>(undefined) },
            { weight: 2, arbitrary: depth < 3 ? mutated(v, depth + 1) : oddValue },
          ),
        ),
        fc.option(fc.tuple(fc.string({ maxLength: 12 }), oddValue), { freq: 4 }),
      )
      .map(([...values]) => {
        const extra = values.pop() as [string, unknown] | null;
        const out: Record<string, unknown> = {};
        entries.forEach(([k], i) => {
          if (values[i] !== undefined) out[k] = values[i];
        });
        if (extra) out[extra[0]] = extra[1];
        return out;
      });
  }
  return fc.oneof({ weight: 1, arbitrary: fc.constant(valid) }, { weight: 3, arbitrary: oddValue });
}

/** How a body is put on the wire. */
export interface BodyPlan {
  body?: Buffer;
  headers: Record<string, string>;
}

const contentTypes = fc.constantFrom(
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=koi8-r',
  'application/json; charset=nonsense',
  'application/merge-patch+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'json',
  '',
);

/** The body bytes: JSON of `value` (mostly), random bytes, or a document far over the body limit. */
function payload(value: fc.Arbitrary<unknown>): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 8, arbitrary: value.map((v) => Buffer.from(JSON.stringify(v) ?? 'null', 'utf8')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          '{',
          '{"a":',
          '[1,2',
          '{"__proto__":{"admin":true}}',
          '{"constructor":{"prototype":{"x":1}}}',
          '\ufeff{}',
          'null',
          '"x"',
          '1e999999',
          '{"a":1}{"b":2}',
        )
        .map((s) => Buffer.from(s, 'utf8')),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 60_000, max: 400_000 })
        .map((n) => Buffer.from(JSON.stringify({ pad: 'x'.repeat(n) }), 'utf8')),
    },
  );
}

/** A body with its Content-Type and Content-Encoding (none, a real gzip/deflate, or a lie about one). */
export function bodyPlan(value: fc.Arbitrary<unknown>): fc.Arbitrary<BodyPlan> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<BodyPlan>({ headers: {} }) },
    {
      weight: 12,
      arbitrary: fc
        .tuple(
          payload(value),
          contentTypes,
          fc.constantFrom('', '', '', '', 'gzip', 'deflate', 'gzip-lie', 'br', 'identity', 'x-unknown'),
        )
        .map(([bytes, type, encoding]): BodyPlan => {
          const headers: Record<string, string> = {};
          if (type) headers['content-type'] = type;
          let body = bytes;
          if (encoding === 'gzip') body = gzipSync(bytes);
          else if (encoding === 'deflate') body = deflateSync(bytes);
          if (encoding) headers['content-encoding'] = encoding === 'gzip-lie' ? 'gzip' : encoding;
          return { body, headers };
        }),
    },
  );
}

/** The `PSP-Signature` header of a webhook body, as the PSP signs it with the account's webhook secret. */
export function pspSignature(secret: string, body: Buffer, t = Math.floor(Date.now() / 1000)): string {
  const v1 = createHmac('sha256', secret).update(`${t}.`, 'utf8').update(body).digest('hex');
  return `t=${t},v1=${v1}`;
}
