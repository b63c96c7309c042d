import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import { openApiFileText } from '../publish-openapi';
import { errorCodesOf } from './api';
import { HTTP_ERRORS, HttpErrorCode, SERVER_ERRORS } from './errors';
import { ApiService, SERVICE_APIS, openApiDocument } from './openapi';

// The repository root (this spec runs from libs/contracts/src/http under jest).
const repo = join(__dirname, '..', '..', '..', '..');
const services = Object.keys(SERVICE_APIS) as ApiService[];

type Operation = { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };
/** The error codes an operation of a generated document lists, per status. */
function documentedCodes(service: ApiService, path: string, method: string): Map<string, string[]> {
  const op = (openApiDocument(service).paths as Record<string, Record<string, Operation>>)[path][method];
  const out = new Map<string, string[]>();
  for (const [status, response] of Object.entries(op.responses)) {
    const schema = response.content?.['application/json']?.schema as
      { allOf?: { properties?: { error?: { enum?: string[] } } }[] } | undefined;
    const codes = schema?.allOf?.[0]?.properties?.error?.enum;
    if (codes) out.set(status, codes);
  }
  return out;
}

describe('OpenAPI documents of the public HTTP APIs', () => {
  it.each(services)('%s: the committed docs/openapi/<service>.json is the generated one', (service) => {
    const committed = readFileSync(join(repo, 'docs', 'openapi', `${service}.json`), 'utf8');
    assert.equal(
      committed,
      openApiFileText(service),
      `docs/openapi/${service}.json is stale: run npm run openapi`,
    );
  });

  it.each(services)('%s: is a valid OpenAPI 3.1 document (@readme/openapi-parser)', async (service) => {
    const result = await validate(JSON.parse(openApiFileText(service)));
    assert.equal(result.valid, true, result.valid ? '' : compileErrors(result));
    assert.equal(result.specification, 'OpenAPI');
    assert.deepEqual(result.warnings, []);
  });

  it('lists every error code of an operation under its status, the common ones included', () => {
    const checkout = documentedCodes('order', '/v1/checkout', 'post');
    assert.deepEqual(checkout.get('503'), ['GATE_TIMEOUT', 'SERVICE_UNAVAILABLE']);
    assert.deepEqual(checkout.get('409'), [
      'IDEMPOTENCY_KEY_IN_USE',
      'OUT_OF_STOCK',
      'PRICE_CHANGED',
      'VOUCHER_EXHAUSTED',
    ]);
    assert.deepEqual(checkout.get('422'), ['IDEMPOTENCY_KEY_REUSED', 'ORDER_TOTAL_TOO_LARGE', 'ZERO_TOTAL']);
    assert.deepEqual(checkout.get('401'), ['UNAUTHENTICATED']);
    assert.deepEqual(checkout.get('413'), ['PAYLOAD_TOO_LARGE']);
    assert.deepEqual(checkout.get('400'), ['VALIDATION_FAILED']);
    assert.deepEqual(checkout.get('404'), ['UNKNOWN_SKU', 'UNKNOWN_VOUCHER']);

    for (const service of services) {
      const api = SERVICE_APIS[service];
      for (const endpoint of api.endpoints) {
        const listed = [...documentedCodes(service, endpoint.path, endpoint.method).entries()];
        for (const code of errorCodesOf(api, endpoint)) {
          const status = String(HTTP_ERRORS[code].status);
          assert.ok(
            listed.some(([s, codes]) => s === status && codes.includes(code)),
            `${service} ${endpoint.method} ${endpoint.path}: ${code} is not listed under ${status}`,
          );
        }
        if (endpoint.auth !== false)
          assert.ok(
            listed.some(([s]) => s === '401'),
            `${endpoint.path}: no 401`,
          );
        if (endpoint.body)
          assert.ok(
            listed.some(([s]) => s === '413'),
            `${endpoint.path}: no 413`,
          );
      }
    }
  });

  it('uses every code of the error table somewhere, and docs/api.md documents each one', () => {
    const used = new Set<HttpErrorCode>();
    for (const api of Object.values(SERVICE_APIS))
      for (const endpoint of api.endpoints) errorCodesOf(api, endpoint).forEach((c) => used.add(c));
    const apiMd = readFileSync(join(repo, 'docs', 'api.md'), 'utf8');
    for (const code of Object.keys(HTTP_ERRORS) as HttpErrorCode[]) {
      // A route that does not exist, a request the HTTP parser refuses: no operation of their own.
      if (!SERVER_ERRORS.includes(code)) assert.ok(used.has(code), `${code} is answered by no operation`);
      assert.match(
        apiMd,
        new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${HTTP_ERRORS[code].status}\\s*\\|`),
        `docs/api.md: ${code}`,
      );
    }
  });
});
