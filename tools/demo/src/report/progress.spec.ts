import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Progress } from './progress';

const sink = (isTTY: boolean) => {
  const written: string[] = [];
  return { isTTY, written, write: (t: string) => written.push(t) };
};

describe('progress indicator', () => {
  it('on a TTY, rewrites one line in place and ends it with a newline', () => {
    const out = sink(true);
    const p = new Progress('gate off', out);

    p.update('sagas ended 1/3');
    p.update('sagas ended 3/3');
    p.done();

    assert.deepEqual(out.written, [
      '\r\x1b[2Kgate off: sagas ended 1/3',
      '\r\x1b[2Kgate off: sagas ended 3/3',
      '\r\x1b[2Kgate off: sagas ended 3/3\n',
    ]);
  });

  it('elsewhere, prints a plain line at most every interval, and always the last state', () => {
    const out = sink(false);
    let now = 0;
    const p = new Progress('gate on', out, 5_000, () => now);

    p.update('sagas ended 0/3');
    now = 1_000;
    p.update('sagas ended 1/3');
    now = 5_000;
    p.update('sagas ended 2/3');
    now = 6_000;
    p.update('sagas ended 3/3');
    p.done();

    assert.deepEqual(out.written, [
      'gate on: sagas ended 0/3\n',
      'gate on: sagas ended 2/3\n',
      'gate on: sagas ended 3/3\n',
    ]);
  });

  it('elsewhere, does not print the last state twice', () => {
    const out = sink(false);
    const p = new Progress('psp', out, 5_000, () => 0);

    p.update('sagas ended 3/3');
    p.done();

    assert.deepEqual(out.written, ['psp: sagas ended 3/3\n']);
  });
});
