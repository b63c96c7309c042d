import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiService, SERVICE_APIS, openApiDocument } from './http/openapi';

/** The committed form of a service's OpenAPI document: what docs/openapi/<service>.json holds. */
export const openApiFileText = (service: ApiService): string =>
  JSON.stringify(openApiDocument(service), null, 2) + '\n';

/** Writes docs/openapi/<service>.json for every service; a unit spec checks they are current. */
export function publishOpenApi(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const services = Object.keys(SERVICE_APIS) as ApiService[];
  for (const service of services) writeFileSync(join(dir, `${service}.json`), openApiFileText(service));
  return services;
}

if (require.main === module) {
  // dist/src/publish-openapi.js -> the repository's docs/openapi
  const dir = join(__dirname, '..', '..', '..', '..', 'docs', 'openapi');
  const written = publishOpenApi(dir);
  console.log(`wrote ${written.length} OpenAPI documents to ${dir}`);
}
