import { EntityManager } from 'typeorm';

/** Rows and row count of one statement: the row count is how a conditional update answers. */
export interface SqlResult<R> {
  rows: R[];
  rowCount: number;
}

/** Runs one statement on the transaction's connection and returns its rows and row count. */
export async function sql<R = Record<string, unknown>>(
  tx: EntityManager,
  text: string,
  params: unknown[] = [],
): Promise<SqlResult<R>> {
  const runner = tx.queryRunner;
  if (!runner?.isTransactionActive) throw new Error('this statement must run inside a transaction');
  const result = await runner.query(text, params, true);
  return { rows: (result.records ?? []) as R[], rowCount: result.affected ?? result.records?.length ?? 0 };
}
