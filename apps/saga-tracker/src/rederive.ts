import { DataSource } from 'typeorm';
import { dataSourceOptions } from '@checkout/service-kit';
import { loadSagaTrackerConfig, stuckTimeoutsOf } from './config/saga-tracker.config';
import { DATABASE } from './database';
import { RederiveSagasHandler } from './saga/commands/rederive-sagas/rederive-sagas.handler';

/** Derives every saga's state again from its steps (run after a release that changed the derivation rules). */
async function main(): Promise<void> {
  const config = loadSagaTrackerConfig();
  const ds = new DataSource(dataSourceOptions(config.DATABASE_URL, DATABASE, config));
  await ds.initialize();
  try {
    const result = await new RederiveSagasHandler(ds, stuckTimeoutsOf(config)).execute();
    console.log(
      JSON.stringify({ level: 'info', service: 'saga-tracker', msg: 'sagas derived again', ...result }),
    );
  } finally {
    await ds.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(
    JSON.stringify({ level: 'fatal', service: 'saga-tracker', msg: 'rederive failed', err: String(error) }),
  );
  process.exit(1);
});
