import { MIGRATIONS } from './migrations';

/** This service's TypeORM entities and migrations. */
export const DATABASE = { entities: [], migrations: MIGRATIONS };
