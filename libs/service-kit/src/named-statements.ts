import { createHash } from 'node:crypto';
import { Client, QueryConfig } from 'pg';

/**
 * A pg Client that runs every parameterised statement as a named prepared statement (name = hash of its text):
 * PostgreSQL parses and plans each distinct statement once per connection instead of on every execution. Our
 * statements are fixed texts with $n parameters, so a connection holds a few dozen of them. Statements without
 * parameters (BEGIN, COMMIT, migrations) keep the simple protocol. Not for a transaction-mode pooler (PgBouncer
 * before 1.21), which cannot keep a prepared statement across transactions: DB_PREPARED_STATEMENTS=false.
 */
export class NamedStatementClient extends Client {
  /** Statement texts named so far; past the bound, new texts (a dynamically built statement) go unnamed. */
  private static readonly names = new Map<string, string>();
  static readonly MAX_NAMED = 1_000;

  override query(config: unknown, values?: unknown, callback?: unknown): never {
    const name =
      typeof config === 'string' && Array.isArray(values) && values.length > 0
        ? NamedStatementClient.nameOf(config)
        : undefined;
    if (name !== undefined) {
      const named: QueryConfig = { name, text: config as string, values: values as unknown[] };
      return (super.query as (...args: unknown[]) => never)(named, callback);
    }
    return (super.query as (...args: unknown[]) => never)(config, values, callback);
  }

  private static nameOf(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < this.MAX_NAMED) {
      name = `s_${createHash('sha1').update(text).digest('base64url')}`;
      this.names.set(text, name);
    }
    return name;
  }
}
