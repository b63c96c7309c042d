import { EntityManager } from 'typeorm';
import { MIGRATIONS } from './migrations';

/** This service's TypeORM entities and migrations. */
export const DATABASE = { entities: [], migrations: MIGRATIONS };

/** Anything that runs SQL: a DataSource, or the EntityManager of an open transaction. */
export type Sql = Pick<EntityManager, 'query'>;
