import { EntityManager } from 'typeorm';

export { sql, SqlResult } from '@checkout/messaging';

/** Runs fn after a savepoint; rolls back to the savepoint when fn says so. */
export async function withSavepoint<T>(
  tx: EntityManager,
  name: string,
  fn: () => Promise<{ keep: boolean; value: T }>,
): Promise<T> {
  await tx.query(`SAVEPOINT ${name}`);
  const { keep, value } = await fn();
  if (!keep) {
    // Rolling back to the savepoint also drops the row locks taken after it.
    await tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
    await tx.query(`RELEASE SAVEPOINT ${name}`);
  }
  // A kept savepoint is left for COMMIT to release: one round trip less while a hot stock row is locked.
  return value;
}

/** Postgres error code of a failed statement (TypeORM wraps the driver error). */
export function pgCode(error: unknown): string | undefined {
  const e = error as { code?: string; driverError?: { code?: string } };
  return e?.driverError?.code ?? e?.code;
}
