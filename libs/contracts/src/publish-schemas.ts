import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SAGA_TOPICS, jsonSchemaOf } from './registry';

/** Writes the JSON Schema of every event (v1) to libs/contracts/schemas; a unit test checks they are current. */
const dir = join(__dirname, '..', '..', 'schemas');
mkdirSync(dir, { recursive: true });
for (const type of SAGA_TOPICS) {
  writeFileSync(join(dir, `${type}.v1.json`), JSON.stringify(jsonSchemaOf(type, 1), null, 2) + '\n');
}
console.log(`wrote ${SAGA_TOPICS.length} schemas to ${dir}`);
