import { MissingPrerequisite } from './prerequisites';
import { down, restartService, startService, stopService, up } from './stack';

/** `up [--infra]` / `down`: what npm run up / npm run down call; `restart|stop|start <service>` for one service. */
async function main(): Promise<void> {
  const [command, ...flags] = process.argv.slice(2);
  if (command === 'up') {
    const timings = await up({ services: !flags.includes('--infra') });
    console.log(`[stack] up in ${(timings.total / 1000).toFixed(1)} s: ${JSON.stringify(timings)}`);
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
    console.error('usage: cli.js up [--infra] | restart <service> | stop <service> | start <service> | down');
    process.exitCode = 2;
  }
}

main().catch((error: unknown) => {
  console.error(
    error instanceof MissingPrerequisite ? error.message : `[stack] ${(error as Error).stack ?? error}`,
  );
  process.exitCode = 1;
});
