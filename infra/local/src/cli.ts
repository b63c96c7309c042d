import { PortConflict } from './parts';
import { INFRA_PARTS } from './parts';
import { MissingPrerequisite } from './prerequisites';
import { UpFailed, bringUp, down, restartService, startService, stopService } from './stack';

type InfraPart = (typeof INFRA_PARTS)[number];

/**
 * `up [--infra] [--only=postgres,redis,...]` / `down`: what npm run up / npm run down call;
 * `restart|stop|start <service>` for one service.
 */
async function main(): Promise<void> {
  const [command, ...flags] = process.argv.slice(2);
  if (command === 'up') {
    const only = flags
      .find((f) => f.startsWith('--only='))
      ?.slice('--only='.length)
      .split(',');
    const unknown = only?.filter((p) => !(INFRA_PARTS as readonly string[]).includes(p)) ?? [];
    if (unknown.length) throw new Error(`--only takes ${INFRA_PARTS.join(', ')}; got ${unknown.join(', ')}`);
    const { timings, started } = await bringUp({
      services: !flags.includes('--infra'),
      only: only as InfraPart[] | undefined,
    });
    const secs = Object.entries(timings)
      .map(([part, ms]) => `${part} ${(ms / 1000).toFixed(1)} s`)
      .join(', ');
    console.log(`[stack] up (${started.length ? `started ${started.join(', ')}` : 'all reused'}): ${secs}`);
  } else if (command === 'restart' && flags[0]) {
    await restartService(flags[0]);
  } else if (command === 'stop' && flags[0]) {
    await stopService(flags[0]);
  } else if (command === 'start' && flags[0]) {
    await startService(flags[0]);
  } else if (command === 'down') {
    await down();
    console.log('[stack] down');
  } else {
    console.error(
      'usage: cli.js up [--infra] [--only=postgres,redis,kafka,connect] | restart <service> | stop <service> | start <service> | down',
    );
    process.exitCode = 2;
  }
}

main().catch((error: unknown) => {
  const known =
    error instanceof MissingPrerequisite || error instanceof PortConflict || error instanceof UpFailed;
  console.error(known ? `[stack] ${(error as Error).message}` : `[stack] ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
});
