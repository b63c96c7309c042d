import { afterAll, afterEach, beforeAll, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { InboxTransport, consoleLogger } from '@checkout/messaging';
import { TenantRegistry, hashApiKey } from '@checkout/service-kit';
import { goldenFixture, sagaHarness } from '@checkout/testing';
import { MIGRATIONS } from '../src/migrations';
import { RecordSagaStepHandler } from '../src/saga/commands/record-step/record-step.handler';
import { SagaEventsConsumer } from '../src/saga/consumers/saga-events.consumer';
import { SagaMetrics } from '../src/saga/saga.metrics';
import { SHIPPED_PATH, TEST_TIMEOUTS } from './support';

const { tenantId, sagaId } = goldenFixture('order.created');
const tenants = new TenantRegistry([{ id: tenantId, apiKeySha256: hashApiKey('saga-key') }]);

const timelineOf = async (ds: DataSource) =>
  (
    (await ds.query(`SELECT type, service, outcome FROM saga_step WHERE saga_id = $1 ORDER BY occurred_at`, [
      sagaId,
    ])) as { type: string; service: string; outcome: string }[]
  ).map((s) => `${s.service}:${s.type}:${s.outcome}`);

const sagaOf = async (ds: DataSource) =>
  (
    (await ds.query(
      `SELECT status, terminal, compensated, step_count AS "stepCount", waiting_step AS "waitingStep"
       FROM saga WHERE tenant_id = $1 AND saga_id = $2`,
      [tenantId, sagaId],
    )) as {
      status: string;
      terminal: boolean;
      compensated: boolean;
      stepCount: number;
      waitingStep: string | null;
    }[]
  )[0];

describe('saga-tracker reactions: given the golden events, expect no event and the timeline', () => {
  const saga = sagaHarness({
    service: 'saga-tracker',
    migrations: MIGRATIONS,
    runtime: (dataSource) =>
      new InboxTransport({
        name: 'saga-tracker',
        brokers: ['127.0.0.1:1'],
        dataSource,
        logger: consoleLogger,
        admission: { tenants, codePrefix: 'SAGA' },
      }).addConsumer(
        new SagaEventsConsumer(
          new RecordSagaStepHandler(TEST_TIMEOUTS, new SagaMetrics(new Registry(), dataSource, tenants)),
        ),
      ),
  });
  beforeAll(() => saga.start(), 120_000);
  afterEach(() => saga.cleanUp());
  afterAll(() => saga.stop());

  it('given the happy path up to the shipment, expect each event a step of one saga, shipped and over', async () => {
    const { dataSource } = await saga.givenEvents(...SHIPPED_PATH).expectEvents();
    assert.deepEqual(await timelineOf(dataSource), [
      'order:order.created:progress',
      'inventory:inventory.reserved:progress',
      'payment:payment.succeeded:progress',
      'inventory:inventory.committed:progress',
      'order:order.paid:progress',
      'fulfillment:fulfillment.shipment-created:terminal',
    ]);
    assert.deepEqual(await sagaOf(dataSource), {
      status: 'SHIPPED',
      terminal: true,
      compensated: false,
      stepCount: 6,
      waitingStep: null,
    });
  });

  it('given a failed payment, expect the compensation steps recorded and the saga waiting for the stock release', async () => {
    const { dataSource } = await saga
      .givenEvents('order.created', 'inventory.reserved', 'payment.failed', 'order.cancelled')
      .expectEvents();
    const state = await sagaOf(dataSource);
    assert.equal(state.stepCount, 4);
    assert.equal(state.terminal, false);
    assert.equal(state.waitingStep, 'stock-release');
  });
});
