import { AddressInfo, Server, Socket, createConnection, createServer } from 'node:net';

/** What the proxy does to the traffic right now. */
export type FaultMode =
  /** Bytes pass, each chunk held back `latencyMs` (plus up to `jitterMs`). */
  | { kind: 'latency'; latencyMs: number; jitterMs?: number }
  /** Connections stay open, no byte moves either way until the fault ends (then the held bytes flow). */
  | { kind: 'stall' }
  /** Every open connection is reset (RST) and new ones are reset on accept. */
  | { kind: 'reset' }
  /** Bytes are swallowed (never forwarded, never answered) and new connections are accepted but go nowhere. */
  | { kind: 'blackhole' };

/** Counters of what the proxy saw and did. */
export interface ProxyStats {
  accepted: number;
  reset: number;
  bytesUp: number;
  bytesDown: number;
  swallowed: number;
}

interface Pipe {
  client: Socket;
  upstream: Socket;
  /** Chunks not yet forwarded, in arrival order: `due` is when (Infinity while stalled). */
  held: { to: Socket; chunk: Buffer; due: number }[];
  timer?: NodeJS.Timeout;
}

/**
 * A TCP fault proxy on 127.0.0.1 (loopback only, never another interface): `listen()` forwards every connection
 * to `target`; `fault(mode, forMs?)` injects latency, stalls, resets or black-holing, for a while or until
 * `heal()`. Plain node:net, one process, no privileges.
 */
export class FaultProxy {
  private server?: Server;
  private readonly pipes = new Set<Pipe>();
  private mode: FaultMode | null = null;
  private healTimer?: NodeJS.Timeout;
  readonly stats: ProxyStats = { accepted: 0, reset: 0, bytesUp: 0, bytesDown: 0, swallowed: 0 };

  constructor(private readonly target: { host: '127.0.0.1'; port: number }) {
    if (target.host !== '127.0.0.1') throw new Error('the fault proxy forwards to loopback only');
  }

  /** Starts listening on 127.0.0.1 (port 0: a free one); returns the port. */
  async listen(port = 0): Promise<number> {
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    return (server.address() as AddressInfo).port;
  }

  /** The fault in force, or null when traffic passes untouched. */
  get current(): FaultMode | null {
    return this.mode;
  }

  /** Injects a fault now; with `forMs`, heals by itself after that long. */
  fault(mode: FaultMode, forMs?: number): void {
    clearTimeout(this.healTimer);
    this.mode = mode;
    if (mode.kind === 'reset') for (const pipe of [...this.pipes]) this.resetPipe(pipe);
    if (forMs !== undefined) this.healTimer = setTimeout(() => this.heal(), forMs);
  }

  /** Ends the fault: held bytes flow again in order; black-holed connections are reset (their bytes are gone). */
  heal(): void {
    clearTimeout(this.healTimer);
    const was = this.mode;
    this.mode = null;
    for (const pipe of [...this.pipes]) {
      if (was?.kind === 'blackhole') {
        this.resetPipe(pipe);
        continue;
      }
      for (const entry of pipe.held) if (entry.due === Infinity) entry.due = 0;
      this.pump(pipe);
    }
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    clearTimeout(this.healTimer);
    for (const pipe of [...this.pipes]) this.resetPipe(pipe);
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: Socket): void {
    this.stats.accepted += 1;
    if (this.mode?.kind === 'reset') {
      this.stats.reset += 1;
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host: this.target.host, port: this.target.port });
    const pipe: Pipe = { client, upstream, held: [] };
    this.pipes.add(pipe);
    const end = () => {
      if (!this.pipes.delete(pipe)) return;
      clearTimeout(pipe.timer);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.on('data', (chunk: Buffer) => this.forward(pipe, upstream, chunk, 'up'));
    upstream.on('data', (chunk: Buffer) => this.forward(pipe, client, chunk, 'down'));
  }

  private forward(pipe: Pipe, to: Socket, chunk: Buffer, direction: 'up' | 'down'): void {
    const mode = this.mode;
    if (direction === 'up') this.stats.bytesUp += chunk.length;
    else this.stats.bytesDown += chunk.length;
    if (mode?.kind === 'blackhole') {
      this.stats.swallowed += chunk.length;
      return;
    }
    const due =
      mode?.kind === 'stall'
        ? Infinity
        : mode?.kind === 'latency'
          ? Date.now() + mode.latencyMs + Math.floor(Math.random() * (mode.jitterMs ?? 0))
          : 0;
    // One queue per connection, in arrival order: a chunk never overtakes an earlier one.
    pipe.held.push({ to, chunk, due });
    this.pump(pipe);
  }

  /** Writes the chunks at the head of the queue that are due; waits for the next one. */
  private pump(pipe: Pipe): void {
    clearTimeout(pipe.timer);
    const now = Date.now();
    while (pipe.held.length > 0 && pipe.held[0].due <= now) {
      const { to, chunk } = pipe.held.shift()!;
      if (!to.destroyed) to.write(chunk);
    }
    const head = pipe.held[0];
    if (head && head.due !== Infinity) pipe.timer = setTimeout(() => this.pump(pipe), head.due - now);
  }

  private resetPipe(pipe: Pipe): void {
    if (!this.pipes.delete(pipe)) return;
    this.stats.reset += 1;
    clearTimeout(pipe.timer);
    pipe.held.length = 0;
    pipe.client.resetAndDestroy();
    pipe.upstream.resetAndDestroy();
  }
}
