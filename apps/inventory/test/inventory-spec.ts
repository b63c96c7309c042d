import { afterAll, beforeAll } from '@jest/globals';
import assert from 'node:assert/strict';
import { DataSource, EntityManager } from 'typeorm';
import { InboxContext, InboxTransport, consoleLogger } from '@checkout/messaging';
import { TenantRegistry, hashApiKey } from '@checkout/service-kit';
import { serviceDataSource } from '@checkout/testing';
import {
  CancelOrderStockHandler,
  CommitStockHandler,
  ExpireReservationsHandler,
  ReleaseStockHandler,
  ReserveStockHandler,
  ReserveStockInput,
  ReserveStockResult,
  ReturnSoldStockHandler,
  SetStockHandler,
} from '../src/reservation/commands';
import { ReservationConsumer } from '../src/reservation/consumers/reservation.consumer';
import { TEST_TENANT, eventsOf, expire, inTx, order, outbox } from './support';

/** The tenant registry of the specs that call consumers directly: only the test tenant. */
export const testTenants = new TenantRegistry([
  {
    id: TEST_TENANT,
    apiKeySha256: hashApiKey('it-key'),
  },
]);

/** The context a consumer method gets from the transport, on a transaction of the spec's own. */
export const contextOf = (tx: EntityManager, topic = 'order.created'): InboxContext =>
  new InboxContext(tx, topic, 0, [], (_event, fn) => fn());

/**
 * The service's consumer transport as the app builds it (admission, domain errors, batch size), never connected
 * to Kafka: `apply()` is its database path. Its own inbox name keeps the running service's inbox apart.
 */
export const inventoryTransport = (
  ds: DataSource,
  consumer: ReservationConsumer,
  name = 'it-inventory-batch',
): InboxTransport =>
  new InboxTransport({
    name,
    brokers: ['127.0.0.1:1'],
    dataSource: ds,
    logger: consoleLogger,
    admission: { tenants: testTenants, codePrefix: 'INVENTORY' },
    batchSize: 100,
    sagaLocks: true, // as the service runs it (apps/inventory/src/main.ts)
  }).addConsumer(consumer);

/**
 * The set-up the inventory integration specs share: a pool on the inventory database opened before the
 * suite and closed after it (call inside `describe`), the commands as the service builds them, and the
 * steps the specs are written in.
 */
export function inventorySpec(poolSize = 10) {
  let dataSource: DataSource | undefined;
  beforeAll(async () => {
    dataSource = await serviceDataSource('inventory_svc', poolSize);
  });
  afterAll(async () => {
    await dataSource?.destroy();
  });
  const tenantId = TEST_TENANT;
  const spec = {
    /** The pool on the inventory database (open between before and after). */
    get ds(): DataSource {
      if (!dataSource) throw new Error('inventorySpec: the database is opened in before()');
      return dataSource;
    },
    tenantId,
    reserveBatch: new ReserveStockHandler(outbox, { INVENTORY_RESERVATION_TTL_SECONDS: 600 }),
    /** One order through ReserveStockHandler (a batch of one), all lines or none. */
    reserve: {
      execute: async (tx: EntityManager, input: ReserveStockInput): Promise<ReserveStockResult> =>
        (await spec.reserveBatch.execute(tx, [input]))[0],
    },
    commit: new CommitStockHandler(outbox),
    release: new ReleaseStockHandler(outbox),
    expireJob: new ExpireReservationsHandler(outbox),
    returnSold: new ReturnSoldStockHandler(),
    setStock: new SetStockHandler(outbox),
    /** The consumer class as the service builds it. */
    get consumer(): ReservationConsumer {
      return new ReservationConsumer(
        spec.reserveBatch,
        spec.release,
        spec.commit,
        spec.returnSold,
        new CancelOrderStockHandler(spec.release, spec.returnSold),
      );
    },
    /** Reserves the order and asserts it was held. */
    async reserved(o: ReturnType<typeof order>): Promise<void> {
      const r = await inTx(spec.ds, (tx) => spec.reserve.execute(tx, { tenantId, order: o }));
      assert.equal(r.outcome, 'reserved');
    },
    /** payment.succeeded for the order. */
    pay: (orderId: string) => inTx(spec.ds, (tx) => spec.commit.execute(tx, { tenantId, orderId })),
    /** The order's reservation ran out and the expiry job released it. */
    async expiredAndReleased(orderId: string, skus: string[]): Promise<void> {
      await expire(spec.ds, orderId);
      await inTx(spec.ds, (tx) => spec.expireJob.execute(tx, { tenantId, skus }));
    },
    /** The last event the inventory outbox holds for the order. */
    lastEvent: async (orderId: string) => (await eventsOf(spec.ds, orderId)).at(-1)!,
  };
  return spec;
}
