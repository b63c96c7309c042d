import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { DEFAULT_OPTIONS } from './context';
import { parseFlags } from './main';

describe('npm run chaos flags', () => {
  it('given no flags, runs every scenario with the defaults (a 10 minute soak)', () => {
    const { scenarios, options } = parseFlags([]);
    assert.deepEqual(scenarios, ['app-kill', 'infra-kill', 'psp-storm', 'network-faults', 'soak']);
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

  it('given --soak <seconds>, runs the soak alone for that long; bare --soak is the 600 s default', () => {
    const timed = parseFlags(['--soak', '300']);
    assert.deepEqual(timed.scenarios, ['soak']);
    assert.equal(timed.options.soakMs, 300_000);
    const bare = parseFlags(['--soak', '--soak-rate=2']);
    assert.deepEqual(bare.scenarios, ['soak']);
    assert.equal(bare.options.soakMs, 600_000);
    assert.equal(bare.options.soakRate, 2);
    const withOthers = parseFlags(['--scenarios=psp-storm', '--soak=60']);
    assert.deepEqual(withOthers.scenarios, ['psp-storm', 'soak']);
    assert.throws(() => parseFlags(['--soak=60', '--soak-minutes=2']), /say the same/);
  });

  it('given an unknown scenario or a bad number, refuses with a message', () => {
    assert.throws(() => parseFlags(['--scenarios=psp-storm-typo']), /unknown scenario psp-storm-typo/);
    assert.throws(() => parseFlags(['--orders=-3']), /--orders must be a positive number/);
    assert.throws(() => parseFlags(['--unknown-flag']));
  });
});
