import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { AddressInfo, Server, Socket, createServer } from 'node:net';
import { join } from 'node:path';
import { loadStackConfig } from '../src/config';
import { ensureJars } from '../src/jars';
import { javaCommand } from '../src/prerequisites';

const PROBE = join(__dirname, 'fixtures', 'TimerProbe.java');
const QUEUE_PROBE = join(__dirname, 'fixtures', 'QueueProbe.java');
const LOOK_PROBE = join(__dirname, 'fixtures', 'LookProbe.java');
const COMMIT_PROBE = join(__dirname, 'fixtures', 'CommitProbe.java');
const PUBLISHER_PROBE = join(__dirname, 'fixtures', 'PublisherProbe.java');

/** The pinned Debezium Postgres plugin's folder: every jar of it, for a probe's class path. */
function pluginClasspath(): string {
  const { pluginPath } = ensureJars(loadStackConfig());
  return join(pluginPath, 'debezium-connector-postgres', '*');
}

/** Runs a single-file Java probe on the pinned Debezium plugin's class path and returns its words on stdout. */
function probe(file: string, args: string[], agent?: string): string[] {
  const run = spawnSync(
    javaCommand(),
    [...(agent ? [`-javaagent:${agent}`] : []), '-cp', pluginClasspath(), file, ...args],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.trim().split(' ');
}

/**
 * Runs QueueProbe on the pinned Debezium's ChangeEventQueue with our connectors' poll interval (50 ms) and batch
 * size (1): how long a poll of the empty queue waits, and how long one waits for a record enqueued 100 ms in.
 */
function queuePolls(agent?: string): { quietMs: number; recordMs: number; returned: number } {
  const [quietMs, recordMs, returned] = probe(QUEUE_PROBE, ['50'], agent).map(Number);
  return { quietMs, recordMs, returned };
}

/**
 * Runs LookProbe, pgjdbc's PGStream looking at a socket as the WAL reader does, against a server here that sends
 * one byte `byteAfterMs` after it accepts: each look until the byte is seen, then one look after the agent's clock
 * was told WAL data was read.
 */
async function socketLooks(
  byteAfterMs: number,
  agent?: string,
): Promise<{ looks: { pending: boolean; ms: number }[]; activeMs: number }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    setTimeout(() => socket.write('Z'), byteAfterMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const port = (server.address() as AddressInfo).port;
    const child = spawn(javaCommand(), [
      ...(agent ? [`-javaagent:${agent}`] : []),
      '-cp',
      pluginClasspath(),
      LOOK_PROBE,
      String(port),
    ]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, stderr);
    const lines = stdout.trim().split('\n');
    const active = lines.pop() ?? '';
    assert.match(active, /^active \d+ false$/);
    return {
      looks: lines.map((line) => {
        const [pending, ms] = line.split(' ');
        return { pending: pending === 'true', ms: Number(ms) };
      }),
      activeMs: Number(active.split(' ')[1]),
    };
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
}

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

  it("lets a Connect task's poll of a quiet queue wait 1 s, and still returns a record the moment it is queued", () => {
    const { connectAgent } = ensureJars(loadStackConfig());

    // Our connectors' 50 ms: without the agent the task thread wakes 20 times a second for nothing.
    const plain = queuePolls();
    assert.ok(
      plain.quietMs < 500,
      `an unpatched quiet poll waits its 50 ms interval, took ${plain.quietMs} ms`,
    );

    const patched = queuePolls(connectAgent);
    assert.ok(patched.quietMs >= 900, `a patched quiet poll waits about 1 s, took ${patched.quietMs} ms`);
    // The record is enqueued 100 ms into the poll: the poll returns it then, not at the end of its second.
    assert.equal(patched.returned, 1);
    assert.ok(patched.recordMs < 600, `the queued record came back after ${patched.recordMs} ms`);
  });

  it("lets a quiet WAL reader's look wait up to 1 s for a first byte, and a busy one's 1 ms as before", async () => {
    const { connectAgent } = ensureJars(loadStackConfig());

    // pgjdbc's own look waits 1 ms: hundreds of them before a byte that comes 700 ms after the connection.
    const plain = await socketLooks(700);
    assert.ok(plain.looks.length > 20, `${plain.looks.length} unpatched looks`);

    // Patched, a reader that has read no WAL data yet is quiet: each empty look waits 1 s, and the look that is
    // waiting when the byte lands (2.3 s in) returns at once instead of at the end of its second.
    const patched = await socketLooks(2_300, connectAgent);
    const empty = patched.looks.filter((look) => !look.pending);
    const last = patched.looks.at(-1);
    assert.ok(
      empty.length >= 1 && empty.length <= 3,
      `${empty.length} empty looks: ${JSON.stringify(patched.looks)}`,
    );
    for (const look of empty) assert.ok(look.ms >= 750, `an empty quiet look took ${look.ms} ms`);
    assert.equal(last?.pending, true);
    assert.ok(
      patched.looks.reduce((sum, look) => sum + look.ms, 0) < 2_900,
      `the byte was seen when it came: ${JSON.stringify(patched.looks)}`,
    );

    // A reader that just read WAL data looks for 1 ms, as pgjdbc does, so the pause still batches a busy stream.
    assert.ok(patched.activeMs < 100, `a look after WAL data took ${patched.activeMs} ms`);
  });

  it("lets a Postgres task's commit read its offsets back only when records were acknowledged since the one before the last", () => {
    const { connectAgent } = ensureJars(loadStackConfig());

    // Connect calls commit() after every offset flush (each second here), and Debezium's Postgres task answers
    // each one by reading its offsets back from Kafka and confirming them to PostgreSQL, even with nothing new.
    // The sequence is: commit, an acknowledged record, commit, commit, commit.
    assert.deepEqual(probe(COMMIT_PROBE, []), ['true', 'true', 'true', 'true']);
    // Patched: nothing before the first; the record's offset is flushed by the first flush after it, or by the
    // next one when it was acknowledged after a flush took its snapshot, so both commits after it still confirm.
    assert.deepEqual(probe(COMMIT_PROBE, [], connectAgent), ['false', 'true', 'true', 'false']);
  });

  it("lets Debezium's measurement publisher wait for its next event instead of waking 10 times a second", () => {
    const { connectAgent } = ensureJars(loadStackConfig());

    const [plainWaits, , plainAlive] = probe(PUBLISHER_PROBE, ['1000']);
    assert.ok(Number(plainWaits) >= 5, `the unpatched publisher waited ${plainWaits} times in 1 s`);
    assert.equal(plainAlive, 'false');

    const [waits, publishedMs, alive] = probe(PUBLISHER_PROBE, ['1000'], connectAgent);
    assert.ok(Number(waits) <= 1, `the patched publisher waited ${waits} times in 1 s`);
    // An event still reaches its measurement at once, and stop() still ends the thread.
    assert.ok(Number(publishedMs) < 500, `the event was published after ${publishedMs} ms`);
    assert.equal(alive, 'false');
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
    assert.match(
      lastStart,
      /patched io\.debezium\.connector\.base\.ChangeEventQueue\.<init>: quiet poll 1 s/,
    );
    assert.match(lastStart, /patched org\.postgresql\.core\.PGStream\.hasMessagePending\(\): quiet look/);
    assert.match(
      lastStart,
      /patched org\.postgresql\.core\.v3\.replication\.V3PGReplicationStream\.readInternal\(\): quiet clock/,
    );
    assert.match(
      lastStart,
      /patched io\.debezium\.connector\.postgresql\.PostgresConnectorTask\.commit\(\): only after acknowledged records/,
    );
    assert.match(
      lastStart,
      /patched io\.debezium\.metrics\.stats\.MeasurementCollector\$MeasurementPublisher\.run\(\): waits for an event/,
    );
  });
});
