import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CONNECTOR_DIR, generatedConnectorFiles, outboxConnector } from '../src/connectors';
import { OUTBOX_SERVICES, SERVICES } from '../src/topology';

const regenerate = 'run: npx tsc -b infra/local && npm run connectors -w @checkout/local-stack';

describe('infra/debezium is generated from the topology', () => {
  it('has exactly one connector file per service with an outbox, byte for byte as generated', () => {
    const generated = generatedConnectorFiles();
    const committed = readdirSync(CONNECTOR_DIR)
      .filter((f) => f.endsWith('.json'))
      .sort();
    assert.deepEqual(committed, Object.keys(generated).sort(), regenerate);
    for (const [file, text] of Object.entries(generated))
      assert.equal(readFileSync(join(CONNECTOR_DIR, file), 'utf8'), text, `${file} drifted: ${regenerate}`);
  });

  it('names the database, slot and topic prefix after the service, and refuses a service without an outbox', () => {
    assert.deepEqual(
      OUTBOX_SERVICES.map((s) => s.name),
      ['order', 'inventory', 'payment', 'fulfillment'],
    );
    const payment = outboxConnector(SERVICES.find((s) => s.name === 'payment')!);
    assert.equal(payment.name, 'payment-outbox');
    assert.equal(payment.config['slot.name'], 'payment_outbox');
    assert.equal(payment.config['topic.prefix'], 'payment');
    assert.equal(payment.config['database.dbname'], '${env:PAYMENT_DB_NAME}');
    const tracker = SERVICES.find((s) => s.name === 'saga-tracker')!;
    assert.throws(() => outboxConnector(tracker), /no outbox/);
  });
});
