import { createRequire } from 'node:module';

/** The kafkajs release whose internals this library reaches into: 2.2.4, its last. */
const KNOWN_VERSION = '2.2.4';

/**
 * Throws when the installed kafkajs is not the release whose internals this library patches or calls
 * (kafkajs-idle-fix.ts, kafka-offsets.ts), so an upgrade is a loud failure instead of a silent misuse; `advice`
 * says what to check before updating the caller.
 */
export function assertKnownKafkajs(advice: string): void {
  const version = (createRequire(__filename)('kafkajs/package.json') as { version: string }).version;
  if (version !== KNOWN_VERSION) throw new Error(`kafkajs ${version} is not ${KNOWN_VERSION}: ${advice}`);
}
