import { CONNECTOR_DIR, writeConnectorFiles } from './connectors';

/** Regenerates infra/debezium/*.json from the topology (`npm run connectors -w @checkout/local-stack`). */
const written = writeConnectorFiles();
console.log(`wrote ${written.join(', ')} to ${CONNECTOR_DIR}`);
