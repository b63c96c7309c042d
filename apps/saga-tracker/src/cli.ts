import { OrderId } from '@checkout/contracts';
import { SagaApiClient, TrackerError } from './cli/saga-api.client';
import { formatStuck, formatTimeline } from './cli/timeline-format';

const USAGE = `usage: npm run saga -- trace <orderId> | stuck
  SAGA_TRACKER_URL      the tracker (default: the local stack's, http://127.0.0.1:<SAGA_TRACKER_PORT>,
                        3005 moved by STACK_PORT_OFFSET as \`npm run up\` places it)
  SAGA_TRACKER_API_KEY  the tenant's API key (default acme-dev-key, the dev seed's)`;

/** The local stack's tracker: its port as infra/local places it (SAGA_TRACKER_PORT, else 3005 + STACK_PORT_OFFSET). */
export function localTrackerUrl(env: NodeJS.ProcessEnv = process.env): string {
  const port = env.SAGA_TRACKER_PORT
    ? Number(env.SAGA_TRACKER_PORT)
    : 3005 + Number(env.STACK_PORT_OFFSET ?? 0);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new TrackerError(
      `no tracker port from SAGA_TRACKER_PORT / STACK_PORT_OFFSET (got ${port}); set SAGA_TRACKER_URL`,
    );
  return `http://127.0.0.1:${port}`;
}

/** `npm run saga -- trace <orderId>` prints a saga's timeline; `... stuck` lists the stuck sagas. */
async function main(argv: string[]): Promise<number> {
  const [command, arg] = argv;
  const client = new SagaApiClient(
    process.env.SAGA_TRACKER_URL ?? localTrackerUrl(),
    process.env.SAGA_TRACKER_API_KEY ?? 'acme-dev-key',
  );
  if (command === 'trace' && arg) {
    if (!OrderId.safeParse(arg).success) {
      console.error(`"${arg}" is not an order id (a UUID)`);
      return 2;
    }
    for (const line of formatTimeline(await client.saga(arg))) console.log(line);
    return 0;
  }
  if (command === 'stuck') {
    for (const line of formatStuck(await client.stuck(), new Date())) console.log(line);
    return 0;
  }
  console.error(USAGE);
  return 2;
}

if (require.main === module)
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      console.error(error instanceof TrackerError ? `saga: ${error.message}` : error);
      process.exitCode = 1;
    },
  );
