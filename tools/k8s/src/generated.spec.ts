import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { jsonSchemaOf } from '@checkout/contracts';
import { REPO_ROOT } from '@checkout/local-stack';
import { generatedFiles } from './generated';
import { connectorDefinitionOf, connectorDefinitions, connectorOverridesOf } from './manifests';
import { K8sObject, parseYamlDocuments } from './kustomize';

const REGENERATE = 'run: npx tsc -b tools/k8s && node tools/k8s/dist/src/generate.js';
const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

describe('generated manifests and AsyncAPI are current (one source of truth)', () => {
  const files = generatedFiles();

  it('every generated file is committed exactly as the generator writes it', () => {
    for (const [path, content] of Object.entries(files)) {
      assert.ok(existsSync(join(REPO_ROOT, path)), `${path} is missing; ${REGENERATE}`);
      assert.equal(read(path), content, `${path} is stale; ${REGENERATE}`);
    }
  });

  it('infra/k8s/base holds nothing the generator does not write', () => {
    const walk = (dir: string): string[] =>
      readdirSync(join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(`${dir}/${e.name}`) : [`${dir}/${e.name}`],
      );
    for (const path of walk('infra/k8s/base'))
      assert.ok(path in files, `${path} is not generated: edit tools/k8s/src instead, or an overlay`);
  });

  it('each committed KafkaConnector is one infra/debezium/*.json with its overrides, and every JSON has one', () => {
    const committed = parseYamlDocuments(
      read('infra/k8s/base/kafka/connectors.yaml'),
      'connectors.yaml',
    ) as K8sObject[];
    const defs = connectorDefinitions();
    assert.equal(committed.length, defs.length);
    for (const def of defs) {
      const o = committed.find((c) => c.metadata.name === def.name);
      assert.ok(o, `no KafkaConnector for ${def.name}`);
      const overridden = Object.keys(connectorOverridesOf(def));
      const own = Object.fromEntries(Object.entries(def.config).filter(([k]) => !overridden.includes(k)));
      assert.deepEqual(connectorDefinitionOf(o), { ...def, config: own });
    }
  });

  it('docs/asyncapi.yaml describes order.paid v1 with the published JSON Schema and the fixture', () => {
    const doc = parse(read('docs/asyncapi.yaml')) as {
      asyncapi: string;
      channels: Record<string, { address: string }>;
      components: {
        messages: Record<string, { payload: Record<string, unknown>; examples: { payload: unknown }[] }>;
      };
    };
    assert.equal(doc.asyncapi, '3.0.0');
    assert.deepEqual(
      Object.values(doc.channels).map((c) => c.address),
      ['order.paid'],
    );
    const message = doc.components.messages.orderPaidV1;
    const published = JSON.parse(read('libs/contracts/schemas/order.paid.v1.json')) as Record<
      string,
      unknown
    >;
    assert.deepEqual(
      published,
      JSON.parse(JSON.stringify(jsonSchemaOf('order.paid', 1))),
      'schemas/ is stale',
    );
    assert.deepEqual(message.payload.required, published.required);
    assert.deepEqual(
      Object.keys(message.payload.properties as object),
      Object.keys(published.properties as object),
    );
    assert.deepEqual(
      message.examples[0].payload,
      JSON.parse(read('libs/contracts/fixtures/order.paid.v1.json')),
    );
  });
});
