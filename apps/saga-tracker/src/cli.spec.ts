import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { localTrackerUrl } from './cli';
import { TrackerError } from './cli/saga-api.client';

describe('npm run saga: which tracker it asks', () => {
  it("finds the local stack's tracker where infra/local put it", () => {
    assert.equal(localTrackerUrl({}), 'http://127.0.0.1:3005');
    assert.equal(localTrackerUrl({ STACK_PORT_OFFSET: '200' }), 'http://127.0.0.1:3205');
    assert.equal(
      localTrackerUrl({ STACK_PORT_OFFSET: '200', SAGA_TRACKER_PORT: '4000' }),
      'http://127.0.0.1:4000',
    );
  });

  it('refuses a port that is not one', () => {
    assert.throws(() => localTrackerUrl({ SAGA_TRACKER_PORT: 'abc' }), TrackerError);
    assert.throws(() => localTrackerUrl({ STACK_PORT_OFFSET: '70000' }), TrackerError);
  });
});
