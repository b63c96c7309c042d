import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EventType, PayloadOf, SagaEvent, validateEvent } from '@checkout/contracts';

/** libs/contracts/fixtures: one golden message per event type and version. */
export const GOLDEN_DIR = join(dirname(require.resolve('@checkout/contracts/package.json')), 'fixtures');

/** The golden message of an event type (v1) as committed, validated. */
export function goldenFixture<T extends EventType>(type: T, version = 1): SagaEvent<T> {
  const text = readFileSync(join(GOLDEN_DIR, `${type}.v${version}.json`), 'utf8');
  return validateEvent(JSON.parse(text)) as SagaEvent<T>;
}

/**
 * The golden message of an event type as a fresh delivery (a new eventId), its payload fields replaced by
 * `overrides`; validated, so an override the contract refuses throws here.
 */
export function goldenEvent<T extends EventType>(
  type: T,
  overrides: Partial<PayloadOf<T>> = {},
): SagaEvent<T> {
  const fixture = goldenFixture(type);
  return validateEvent({
    ...fixture,
    eventId: randomUUID(),
    payload: { ...fixture.payload, ...overrides },
  }) as SagaEvent<T>;
}
