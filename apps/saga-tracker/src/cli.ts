import { OrderId } from '@checkout/contracts';
import { SagaApiClient, TrackerError } from './cli/saga-api.client';
import { formatStuck, formatTimeline } from './cli/timeline-format';

const USAGE = `usage: npm run saga -- trace <orderId> | stuck
  SAGA_TRACKER_URL      the tracker (default http://127.0.0.1:3005)
  SAGA_TRACKER_API_KEY  the tenant's API key (default acme-dev-key, the dev seed's)`;

/** `npm run saga -- trace <orderId>` prints a saga's timeline; `... stuck` lists the stuck sagas. */
async function main(argv: string[]): Promise<number> {
  const [command, arg] = argv;
  const client = new SagaApiClient(
    process.env.SAGA_TRACKER_URL ?? 'http://127.0.0.1:3005',
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

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(error instanceof TrackerError ? `saga: ${error.message}` : error);
    process.exitCode = 1;
  },
);
