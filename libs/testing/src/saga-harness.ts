import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DataSource, DataSourceOptions } from 'typeorm';
import { EventType, SagaEvent, validateEvent } from '@checkout/contracts';
import { loadStackConfig, superClient } from '@checkout/local-stack';
import { superuserDataSource } from './database';
import { goldenFixture } from './golden';

/** What the harness needs of the consumer runtime: `InboxTransport.apply` (one delivery, its inbox transaction). */
export interface InboxRuntime {
  apply(topic: string, events: SagaEvent[]): Promise<{ applied: number; duplicates: number }>;
}

/** Settings of a service's saga harness. */
export interface SagaHarnessOptions {
  /** The service: prefixes its scratch databases. */
  service: string;
  /** The service's migrations (its own list, MESSAGING_MIGRATIONS first). */
  migrations: NonNullable<DataSourceOptions['migrations']>;
  /** The service's InboxTransport with its real consumer class added, on a scenario's database. */
  runtime: (dataSource: DataSource) => InboxRuntime;
}

/**
 * An event given to the service: a golden message by type (as committed: the fixtures' causation chain holds) or
 * an envelope (e.g. `goldenEvent(type, {...})`, a fresh delivery with other payload values).
 */
export type GivenEvent = EventType | SagaEvent;

/** An event expected in the outbox: the golden message of the type, or an envelope (e.g. `goldenEvent(type, {...})`). */
export type ExpectedEvent = EventType | (Pick<SagaEvent, 'type' | 'payload'> & Partial<SagaEvent>);

/** How emitted payloads are compared. */
export interface CompareOptions {
  /** Payload fields derived from generated values (a tracking number from a shipment id), compared by presence. */
  ignoring?: string[];
}

/** What a scenario left behind, for the assertions on state that follow. */
export interface ScenarioResult {
  /** The scenario's database (dropped after the test). */
  dataSource: DataSource;
  /** The outbox rows the given events emitted, oldest first. */
  emitted: SagaEvent[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** A value with its generated parts masked: ids other than the saga's, timestamps and the ignored fields. */
function masked(value: unknown, sagaId: string, ignoring: ReadonlySet<string>, key?: string): unknown {
  if (key !== undefined && ignoring.has(key)) return value === undefined ? '<absent>' : '<ignored>';
  if (Array.isArray(value)) return value.map((v) => masked(v, sagaId, ignoring));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, masked(v, sagaId, ignoring, k)]));
  if (typeof value === 'string' && UUID.test(value) && value !== sagaId) return '<id>';
  if (typeof value === 'string' && TIMESTAMP.test(value)) return '<timestamp>';
  return value;
}

/** The comparable part of an event: type, version, tenant, saga and masked payload. */
function shapeOf(
  event: Pick<SagaEvent, 'type' | 'payload'> & Partial<SagaEvent>,
  ignoring: ReadonlySet<string>,
) {
  const sagaId = event.sagaId ?? '';
  return {
    type: event.type,
    version: event.version ?? 1,
    tenantId: event.tenantId,
    sagaId: event.sagaId,
    payload: masked(event.payload, sagaId, ignoring),
  };
}

/** Creates a database as a copy of another (PostgreSQL's TEMPLATE: a file copy, no migrations). */
async function createDatabase(name: string, template?: string): Promise<void> {
  const admin = superClient(loadStackConfig());
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
  } finally {
    await admin.end();
  }
}

async function dropDatabase(name: string): Promise<void> {
  const admin = superClient(loadStackConfig());
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** One scenario: optional state, then events given one delivery each, then the events expected in the outbox. */
export class SagaScenario {
  /** State written and events delivered, in the order given. */
  private readonly steps: (((dataSource: DataSource) => Promise<unknown>) | SagaEvent)[] = [];

  constructor(private readonly open: () => Promise<{ dataSource: DataSource; runtime: InboxRuntime }>) {}

  /** State the service has at this point (written on the scenario's database, e.g. by one of its commands). */
  given(setup: (dataSource: DataSource) => Promise<unknown>): this {
    this.steps.push(setup);
    return this;
  }

  /** Events delivered in this order, each in its own inbox transaction (as the transport applies it). */
  givenEvents(...events: GivenEvent[]): this {
    this.steps.push(...events.map((e) => (typeof e === 'string' ? goldenFixture(e) : e)));
    return this;
  }

  /**
   * Runs the scenario and asserts the outbox holds exactly these events, in order: each a valid envelope
   * (libs/contracts), caused by a given event, of the given saga, its payload equal to the expected (golden)
   * one but for ids and timestamps. No argument: the reaction emits nothing.
   */
  async expectEvents(...expected: (ExpectedEvent | CompareOptions)[]): Promise<ScenarioResult> {
    const options = (expected.find((e) => typeof e === 'object' && !('type' in e)) ?? {}) as CompareOptions;
    const wanted = expected
      .filter((e): e is ExpectedEvent => typeof e === 'string' || 'type' in e)
      .map((e) => (typeof e === 'string' ? goldenFixture(e) : e));
    const { dataSource, runtime } = await this.open();
    const given = new Set<string>();
    for (const step of this.steps) {
      if (typeof step === 'function') {
        await step(dataSource);
        continue;
      }
      given.add(step.eventId);
      const outcome = await runtime.apply(step.type, [step]);
      assert.deepEqual(outcome, { applied: 1, duplicates: 0 }, `${step.type} was not applied`);
    }
    // A service that only consumes (the saga tracker) has no outbox: it emits nothing.
    const [{ outbox }]: { outbox: string | null }[] = await dataSource.query(
      `SELECT to_regclass('outbox') AS outbox`,
    );
    const rows: { payload: unknown }[] = outbox
      ? await dataSource.query(`SELECT payload FROM outbox ORDER BY occurred_at, sequence`)
      : [];
    const emitted = rows.map((r) => validateEvent(r.payload));
    for (const e of emitted) {
      assert.ok(e.causationId && given.has(e.causationId), `${e.type} is not caused by a given event`);
      assert.equal(e.correlationId, e.sagaId, `${e.type}: correlationId`);
    }
    const ignoring = new Set(options.ignoring ?? []);
    assert.deepEqual(
      emitted.map((e) => shapeOf(e, ignoring)),
      wanted.map((e) => shapeOf(e, ignoring)),
    );
    return { dataSource, emitted };
  }
}

/**
 * "Given these events, expect these events" for one service, on scratch PostgreSQL databases: the service's
 * migrations run once into a template, each scenario gets a copy of it and the service's real consumer runtime
 * (`InboxTransport.apply`: admission, inbox row and handler in one transaction). The suite calls `start`,
 * `cleanUp` and `stop` from its hooks (this module is also loaded outside jest).
 */
export function sagaHarness(options: SagaHarnessOptions) {
  const prefix = `${options.service.replace(/-/g, '_')}_saga_${randomBytes(3).toString('hex')}`;
  const template = `${prefix}_template`;
  const open: { name: string; dataSource: DataSource }[] = [];
  let count = 0;

  const scenario = () =>
    new SagaScenario(async () => {
      const name = `${prefix}_${++count}`;
      await createDatabase(name, template);
      const dataSource = await superuserDataSource(name, [], 4);
      open.push({ name, dataSource });
      return { dataSource, runtime: options.runtime(dataSource) };
    });

  return {
    /** Migrates the template database (before the suite: `beforeAll(() => harness.start(), 120_000)`). */
    async start(): Promise<void> {
      await createDatabase(template);
      const ds = await superuserDataSource(template, options.migrations, 4);
      try {
        await ds.runMigrations({ transaction: 'each' });
      } finally {
        await ds.destroy();
      }
    },
    /** Drops the scenarios' databases (after each test). */
    async cleanUp(): Promise<void> {
      for (const { name, dataSource } of open.splice(0)) {
        await dataSource.destroy();
        await dropDatabase(name);
      }
    },
    /** Drops the template (after the suite). */
    async stop(): Promise<void> {
      await this.cleanUp();
      await dropDatabase(template);
    },
    /** A scenario that starts from state written by setup. */
    given: (setup: (dataSource: DataSource) => Promise<unknown>) => scenario().given(setup),
    /** A scenario that starts from these events. */
    givenEvents: (...events: GivenEvent[]) => scenario().givenEvents(...events),
  };
}
