import { CreateSagaTables1764760000000 } from './1764760000000-create-saga-tables';

/** Every migration of this service's database, oldest first. */
export const MIGRATIONS = [CreateSagaTables1764760000000];
