import { randomBytes } from 'node:crypto';
import { DataSource, DataSourceOptions } from 'typeorm';
import { loadStackConfig, superClient } from '@checkout/local-stack';

/** A throwaway database on the stack's PostgreSQL, migrated with the given migrations; drop() removes it. */
export async function scratchDatabase(
  prefix: string,
  migrations: NonNullable<DataSourceOptions['migrations']>,
  poolSize = 10,
) {
  const config = loadStackConfig();
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = superClient(config);
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const dataSource = await superuserDataSource(name, migrations, poolSize);
  await dataSource.runMigrations({ transaction: 'each' });
  return {
    name,
    dataSource,
    async drop(): Promise<void> {
      await dataSource.destroy();
      const a = superClient(config);
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await a.end();
    },
  };
}

/** An initialized TypeORM DataSource on a database of the stack's PostgreSQL, as its superuser. */
export function superuserDataSource(
  database: string,
  migrations: NonNullable<DataSourceOptions['migrations']> = [],
  poolSize = 10,
): Promise<DataSource> {
  const config = loadStackConfig();
  return new DataSource({
    type: 'postgres',
    host: '127.0.0.1',
    port: config.pg.port,
    username: config.pg.superuser,
    password: config.pg.password,
    database,
    migrations,
    synchronize: false,
    extra: { max: poolSize },
  }).initialize();
}

/** A TypeORM DataSource on a service's own database, as its own login role would see it. */
export async function serviceDataSource(database: string, poolSize = 10): Promise<DataSource> {
  return serviceDatabase(database, poolSize).initialize();
}

/** The same, not connected yet (`initialize()` connects it). */
export function serviceDatabase(database: string, poolSize: number): DataSource {
  const config = loadStackConfig();
  return new DataSource({
    type: 'postgres',
    host: '127.0.0.1',
    port: config.pg.port,
    username: database,
    password: config.devDbPassword,
    database,
    synchronize: false,
    extra: { max: poolSize },
  });
}
