// A minimal consumer of order.paid, the public topic of checkout-saga (docs/consumers.md).
// Plain kafkajs; the envelope is validated with @checkout/contracts' validateEvent when it is available (inside
// this repo, after `npm run build`), else only its shape is checked: outside the repo, validate against
// libs/contracts/schemas/order.paid.v1.json with any JSON Schema 2020-12 validator instead.
import { readFileSync } from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';

const brokers = (process.env.KAFKA_BROKERS ?? 'localhost:59092').split(',');
const topic = process.env.TOPIC ?? 'order.paid';
const groupId = process.env.GROUP_ID ?? 'example-order-paid-consumer';
const fromBeginning = process.env.FROM_BEGINNING === 'true';
/** Stop after this many messages (0 = run until Ctrl-C); handy for a smoke test. */
const exitAfter = Number(process.env.EXIT_AFTER ?? 0);

let validate = (value) => {
  const fields = ['eventId', 'type', 'version', 'tenantId', 'sagaId', 'sequence', 'payload'];
  const missing = fields.filter((f) => !(f in value));
  if (missing.length) throw new Error(`not an envelope, missing ${missing.join(', ')}`);
  return value;
};
try {
  const contracts = await import('@checkout/contracts');
  validate = contracts.validateEvent ?? contracts.default.validateEvent;
} catch {
  console.warn('@checkout/contracts not found: checking the envelope shape only');
}

const text = (headers, name) => headers?.[name]?.toString();

// Delivery is at-least-once: the same eventId can arrive again (after a Debezium or consumer restart). A real
// consumer records eventIds in its own database, in the same transaction as the effect (an inbox table with a
// unique eventId); this example keeps them in memory.
const seen = new Set();

// A secured cluster: the same variables as the services (docs/runbook.md, "Kafka and Redis credentials").
const mechanism = process.env.KAFKA_SASL_MECHANISM;
const username = process.env.KAFKA_SASL_USERNAME;
const password = process.env.KAFKA_SASL_PASSWORD;
if (mechanism && !(username && password))
  throw new Error('KAFKA_SASL_MECHANISM needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD');
const sasl = mechanism ? { mechanism, username, password } : undefined;
const caFile = process.env.KAFKA_SSL_CA_FILE;
const ssl =
  process.env.KAFKA_SSL === 'true' ? (caFile ? { ca: [readFileSync(caFile, 'utf8')] } : true) : undefined;

const kafka = new Kafka({ clientId: groupId, brokers, logLevel: logLevel.WARN, sasl, ssl });
const consumer = kafka.consumer({ groupId });
let handled = 0;

async function main() {
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning });
  console.log(`consuming ${topic} from ${brokers.join(',')} as group ${groupId}`);
  await consumer.run({
    // Messages of one partition arrive in order, and every event of one order is on one partition (key = order id).
    eachMessage: async ({ partition, message }) => {
      const eventId = text(message.headers, 'eventId');
      const version = Number(text(message.headers, 'eventVersion') ?? '1');
      if (version !== 1) {
        // A new major version is a new contract: stay on v1 until you upgrade; do not guess.
        console.warn(`skipping ${topic} v${version} event ${eventId}: this consumer knows v1`);
        return;
      }
      let event;
      try {
        event = validate(JSON.parse(message.value?.toString() ?? ''));
      } catch (error) {
        // Never drop silently: park it (your own DLQ, a log with the offset) and go on.
        console.error(`invalid event at partition ${partition} offset ${message.offset}: ${error.message}`);
        return;
      }
      if (seen.has(event.eventId)) {
        console.log(`duplicate ${event.eventId}: already applied`);
      } else {
        seen.add(event.eventId);
        const p = event.payload;
        console.log(
          `order ${p.orderId} of tenant ${p.tenantId} paid ${p.total} ${p.currency} ` +
            `(${p.lines.length} line(s), payment ${p.paymentId}, saga ${text(message.headers, 'sagaId')}, ` +
            `seq ${text(message.headers, 'sequence')}, partition ${partition}, offset ${message.offset})`,
        );
      }
      if (exitAfter > 0 && ++handled >= exitAfter) {
        consumer.pause([{ topic }]); // this offset is committed, nothing after it is taken
        setImmediate(() => void stop(0));
      }
    },
  });
}

let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  await consumer.disconnect().catch(() => undefined);
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

main().catch((error) => {
  console.error(error);
  void stop(1);
});
