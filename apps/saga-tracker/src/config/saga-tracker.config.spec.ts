import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { fetchOf, loadSagaTrackerConfig } from './saga-tracker.config';

const env = (extra: Record<string, string> = {}) => ({
  SERVICE_NAME: 'saga-tracker',
  PORT: '3005',
  KAFKA_BROKERS: '127.0.0.1:9092',
  DATABASE_URL: 'postgres://saga@127.0.0.1:5432/saga_svc',
  ...extra,
});

describe('the tracker gathering its events per fetch (SAGA_FETCH_GATHER_MS)', () => {
  it('by default asks the broker to hold each fetch 2 s unless megabytes have come in', () => {
    const fetch = fetchOf(loadSagaTrackerConfig(env()));

    assert.equal(fetch?.maxWaitTimeInMs, 2_000);
    assert.ok(fetch.minBytes >= 1024 * 1024, `minBytes ${fetch.minBytes}`);
  });

  it('at 0 fetches as every other consumer does (answered at the first event)', () => {
    assert.equal(fetchOf(loadSagaTrackerConfig(env({ SAGA_FETCH_GATHER_MS: '0' }))), undefined);
  });

  it('refuses a negative wait, a wait above 5 s and a non-number, naming the setting', () => {
    for (const bad of ['-1', '5001', 'soon'])
      assert.throws(() => loadSagaTrackerConfig(env({ SAGA_FETCH_GATHER_MS: bad })), /SAGA_FETCH_GATHER_MS/);
  });
});
