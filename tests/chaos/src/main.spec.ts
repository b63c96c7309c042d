import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { DEFAULT_OPTIONS } from './context';
import { parseFlags } from './main';

describe('npm run chaos flags', () => {
  it('given no flags, runs every scenario with the defaults (a 10 minute soak)', () => {
    const { scenarios, options } = parseFlags([]);
    assert.deepEqual(scenarios, ['app-kill', 'infra-kill', 'soak']);
    assert.deepEqual(options, DEFAULT_OPTIONS);
    assert.equal(options.soakMs, 600_000);
  });

  it('given a shorter soak and a few cases, takes them', () => {
    const { scenarios, options } = parseFlags([
      '--scenarios=soak,app-kill',
      '--soak-minutes=1.5',
      '--cases=order',
    ]);
    assert.deepEqual(scenarios, ['soak', 'app-kill']);
    assert.equal(options.soakMs, 90_000);
    assert.deepEqual(options.cases, ['order']);
  });

  it('given an unknown scenario or a bad number, refuses with a message', () => {
    assert.throws(() => parseFlags(['--scenarios=psp-storm-typo']), /unknown scenario psp-storm-typo/);
    assert.throws(() => parseFlags(['--orders=-3']), /--orders must be a positive number/);
    assert.throws(() => parseFlags(['--unknown-flag']));
  });
});
