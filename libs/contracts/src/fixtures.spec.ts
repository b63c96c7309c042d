import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { EVENT_SCHEMAS, EventType, SAGA_TOPICS, validateEvent } from './registry';

// libs/contracts (this spec runs from src/ under jest)
const root = join(__dirname, '..');
const read = (dir: string, file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(root, dir, file), 'utf8')) as Record<string, unknown>;
const versionsOf = (type: EventType) => Object.keys(EVENT_SCHEMAS[type]).map(Number);
const everyVersion = SAGA_TOPICS.flatMap((type) => versionsOf(type).map((version) => ({ type, version })));

/** A draft 2020-12 validator with the formats the published schemas use (uuid, date-time). */
function validatorOf(schema: Record<string, unknown>) {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  return ajv.compile(schema);
}

describe('golden messages (libs/contracts/fixtures)', () => {
  it('has one fixture per event type and version, and no other', () => {
    const files = readdirSync(join(root, 'fixtures'))
      .filter((f) => f.endsWith('.json'))
      .sort();
    assert.deepEqual(files, everyVersion.map(({ type, version }) => `${type}.v${version}.json`).sort());
    assert.equal(files.length, 16);
  });

  it.each(everyVersion)(
    '$type v$version: valid against its published JSON Schema and the zod contract',
    ({ type, version }) => {
      const fixture = read('fixtures', `${type}.v${version}.json`);
      assert.equal(fixture.type, type);
      assert.equal(fixture.version, version);
      const validate = validatorOf(read('schemas', `${type}.v${version}.json`));
      assert.ok(validate(fixture), `${type}: ${JSON.stringify(validate.errors)}`);
      assert.deepEqual(validateEvent(fixture), fixture, 'zod strips or changes nothing');
    },
  );

  it('every fixture tells the same saga: one order, one tenant, sagaId = correlationId = payload.orderId', () => {
    const sagas = new Set(
      everyVersion.map(({ type, version }) => {
        const f = read('fixtures', `${type}.v${version}.json`) as {
          sagaId: string;
          correlationId: string;
          tenantId: string;
          payload: { orderId: string };
        };
        assert.equal(f.payload.orderId, f.sagaId, type);
        assert.equal(f.correlationId, f.sagaId, type);
        return `${f.tenantId}/${f.sagaId}`;
      }),
    );
    assert.equal(sagas.size, 1);
  });

  it('the JSON Schema validator is not a pushover: it refuses what zod refuses', () => {
    const fixture = read('fixtures', 'inventory.reserved.v1.json') as { payload: Record<string, unknown> };
    const validate = validatorOf(read('schemas', 'inventory.reserved.v1.json'));
    const broken = [
      { ...fixture, eventId: 'not-a-uuid' },
      { ...fixture, occurredAt: 'yesterday' },
      { ...fixture, type: 'inventory.released' },
      { ...fixture, payload: { ...fixture.payload, amount: 1.5 } },
      { ...fixture, payload: { ...fixture.payload, lines: [] } },
      { ...fixture, payload: { ...fixture.payload, expiresAt: undefined } },
    ].map((value) => JSON.parse(JSON.stringify(value)) as unknown);
    for (const value of broken) {
      assert.equal(validate(value), false, JSON.stringify(value));
      assert.throws(() => validateEvent(value));
    }
  });
});
