import { randomUUID } from 'node:crypto';
import { Sql } from '../../database';

/** What claiming an Idempotency-Key found. */
export type Claim =
  | { kind: 'claimed'; leaseToken: string }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in-use' }
  | { kind: 'reused' };

/**
 * Idempotency keys (seed "CV" section): unique (tenant, key), the request hash, `processing` under a lease
 * that expires (a crashed request does not wedge its key), `completed` with the response to replay.
 */
export class IdempotencyRepository {
  constructor(
    private readonly leaseMs: number,
    private readonly ttlHours: number,
  ) {}

  /** Claims the key for this request, or says what the earlier request with the same key left. */
  async claim(db: Sql, tenantId: string, key: string, hash: string): Promise<Claim> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const leaseToken = randomUUID();
      // A new key, a lease that expired (crash), or a key past its TTL that cleanup has not deleted yet.
      const claimed: unknown[] = await db.query(
        `INSERT INTO idempotency_keys (tenant_id, key, request_hash, state, lease_token, lease_expires_at, expires_at)
         VALUES ($1, $2, $3, 'processing', $4, now() + $5 * interval '1 millisecond', now() + $6 * interval '1 hour')
         ON CONFLICT (tenant_id, key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, state = 'processing', lease_token = EXCLUDED.lease_token,
               lease_expires_at = EXCLUDED.lease_expires_at, expires_at = EXCLUDED.expires_at, created_at = now(),
               order_id = NULL, response_status = NULL, response_body = NULL, completed_at = NULL
           WHERE (idempotency_keys.state = 'processing' AND idempotency_keys.lease_expires_at < now())
              OR idempotency_keys.expires_at < now()
         RETURNING 1`,
        [tenantId, key, hash, leaseToken, this.leaseMs, this.ttlHours],
      );
      if (claimed.length === 1) return { kind: 'claimed', leaseToken };
      const [row]: {
        request_hash: string;
        state: string;
        response_status: number | null;
        response_body: string | null;
      }[] = await db.query(
        `SELECT request_hash, state, response_status, response_body FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`,
        [tenantId, key],
      );
      if (!row) continue; // the holder gave the key up meanwhile: claim again
      if (row.request_hash !== hash) return { kind: 'reused' };
      if (row.state === 'processing') return { kind: 'in-use' };
      return { kind: 'replay', status: row.response_status!, body: row.response_body! };
    }
    return { kind: 'in-use' };
  }

  /**
   * Looks the key up without claiming it: a completed answer to replay, or a different request under the same
   * key; null when the key is free or still being processed (the checkout goes on and claims it). Run when the
   * flash-sale gate knows the key as answered, so that a client's retry never takes (and gives back) a unit,
   * nor reads OUT_OF_STOCK. The request's hash is asked for only when the key has an answer to compare it with.
   */
  async peek(db: Sql, tenantId: string, key: string, hashOf: () => string): Promise<Claim | null> {
    const [row]: { request_hash: string; response_status: number; response_body: string }[] = await db.query(
      `SELECT request_hash, response_status, response_body FROM idempotency_keys
        WHERE tenant_id = $1 AND key = $2 AND state = 'completed' AND expires_at >= now()`,
      [tenantId, key],
    );
    if (!row) return null;
    if (row.request_hash !== hashOf()) return { kind: 'reused' };
    return { kind: 'replay', status: row.response_status, body: row.response_body };
  }

  /**
   * Stores the response inside the transaction that created the order; false when the lease was lost (the
   * request took longer than the lease and another one took the key over): the caller must roll back.
   */
  async complete(
    tx: Sql,
    tenantId: string,
    key: string,
    leaseToken: string,
    orderId: string,
    status: number,
    body: string,
  ): Promise<boolean> {
    const [, count]: [unknown, number] = await tx.query(
      `UPDATE idempotency_keys
          SET state = 'completed', order_id = $4, response_status = $5, response_body = $6, completed_at = now(),
              lease_token = NULL, lease_expires_at = NULL
        WHERE tenant_id = $1 AND key = $2 AND state = 'processing' AND lease_token = $3`,
      [tenantId, key, leaseToken, orderId, status, body],
    );
    return count === 1;
  }

  /** Gives the key up after a failure that created nothing, so the client may retry with the same key. */
  async release(db: Sql, tenantId: string, key: string, leaseToken: string): Promise<void> {
    await db.query(
      `DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key = $2 AND state = 'processing' AND lease_token = $3`,
      [tenantId, key, leaseToken],
    );
  }
}

/** Deletes keys past their TTL in batches; returns how many went. Safe to run on several instances at once. */
export async function deleteExpiredIdempotencyKeys(db: Sql, batch = 1_000): Promise<number> {
  let total = 0;
  for (;;) {
    const [, count]: [unknown, number] = await db.query(
      `DELETE FROM idempotency_keys WHERE ctid IN (
         SELECT ctid FROM idempotency_keys WHERE expires_at < now() LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [batch],
    );
    total += count;
    if (count < batch) return total;
  }
}
