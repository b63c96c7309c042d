import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Barrier } from './timing';

describe('Barrier', () => {
  it('releases nobody before the last party arrives, then everybody', async () => {
    const barrier = new Barrier(2);
    const passed: string[] = [];
    const first = barrier.wait().then(() => passed.push('a'));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(passed.length, 0);
    const second = barrier.wait().then(() => passed.push('b'));
    await Promise.all([first, second]);
    assert.deepEqual(passed.sort(), ['a', 'b']);
  });
});
