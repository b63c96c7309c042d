import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadStackConfig } from '../src/config';
import { ensureJars } from '../src/jars';
import { javaCommand } from '../src/prerequisites';

const PROBE = join(__dirname, 'fixtures', 'TimerProbe.java');

/**
 * Runs TimerProbe on the pinned Debezium's own Timer: 100 timers of 2 ms, each waited out the way
 * ChangeEventQueue.poll() waits (park for remaining() ms while not expired). Prints how many times remaining()
 * said 0 ms on a timer that was not expired: each such answer is one turn of a busy loop.
 */
function zeroAnswers(agent?: string): number {
  const { pluginPath } = ensureJars(loadStackConfig());
  const plugin = join(pluginPath, 'debezium-connector-postgres');
  const jar = (prefix: string) => {
    const name = readdirSync(plugin).find((f) => f.startsWith(prefix) && f.endsWith('.jar'));
    assert.ok(name, `${prefix}*.jar in ${plugin}`);
    return join(plugin, name);
  };
  const run = spawnSync(
    javaCommand(),
    [
      ...(agent ? [`-javaagent:${agent}`] : []),
      '-cp',
      [jar('debezium-util-'), jar('slf4j-api-')].join(':'),
      PROBE,
      '100',
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(run.status, 0, run.stderr);
  if (agent)
    assert.match(
      run.stderr,
      /\[checkout connect-agent\] patched io\.debezium\.util\.Threads\$\d+\.remaining\(\)/,
    );
  return Number(run.stdout.trim());
}

describe('the Kafka Connect worker agent (infra/connect-agent)', () => {
  it("stops Debezium's timer from answering 0 ms left before it expires, which busy-loops its queue", () => {
    const { connectAgent } = ensureJars(loadStackConfig());

    // Without the agent, each of the 100 timers ends in a spin: millions of 0 ms answers in all.
    assert.ok(zeroAnswers() > 0, 'the unpatched timer answers 0 ms before it expires');
    assert.equal(zeroAnswers(connectAgent), 0);
  });

  it("is loaded by the local stack's Connect worker, which patched Debezium's timer", () => {
    const log = readFileSync(join(loadStackConfig().logs, 'connect.log'), 'utf8');
    // The log is appended to across restarts: the worker's last start is what runs now.
    const lastStart = log.slice(log.lastIndexOf('jvm.args = '));

    assert.match(lastStart, /^jvm\.args = .*-javaagent:\S+connect-agent\.jar/);
    assert.match(
      lastStart,
      /\[checkout connect-agent\] patched io\.debezium\.util\.Threads\$\d+\.remaining\(\)/,
    );
  });
});
