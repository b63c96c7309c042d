import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT, loadStackConfig } from '../src/config';
import { SAGA_TOPICS, dlqTopic } from '@checkout/contracts';
import { connectEnv, connectorDefinitions } from '../src/connect';
import { pinnedVersions } from '../src/jars';
import { serviceEnv } from '../src/services';
import { DB_SERVICES, OUTBOX_SERVICES, SERVICES } from '../src/topology';

interface ComposeService {
  image?: string;
  environment?: Record<string, string | number>;
  volumes?: string[];
  build?: { args?: Record<string, string>; dockerfile?: string };
  depends_on?: Record<string, { condition: string }>;
}
const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
/** The Connect worker's image of the compose file (Debezium's image plus the Java agent). */
const connectDockerfile = readFileSync(join(REPO_ROOT, 'infra', 'docker', 'connect.Dockerfile'), 'utf8');
const placeholders = (value: string) => [...value.matchAll(/\$\{env:([A-Z0-9_]+)\}/g)].map((m) => m[1]);

describe('docker-compose.yml matches the local stack', () => {
  const config = loadStackConfig();

  it('runs every app of the topology, built from its own image, on its default port', () => {
    for (const svc of SERVICES) {
      const app = compose.services[svc.name];
      assert.ok(app, `compose has no service ${svc.name}`);
      assert.equal(app.build?.args?.APP, svc.name);
      assert.equal(String(app.environment?.PORT), String(svc.defaultPort));
      assert.equal(app.environment?.SERVICE_NAME, svc.name);
    }
  });

  it('gives each app only variables the local stack also sets, and the same database', () => {
    for (const svc of SERVICES) {
      const local = serviceEnv(config, svc.name);
      const env = compose.services[svc.name].environment ?? {};
      for (const name of Object.keys(env))
        assert.ok(name in local, `${svc.name}: ${name} is set in compose but not by the local stack`);
      if (svc.database) {
        assert.match(String(env.DATABASE_URL), new RegExp(`/${svc.database}$`));
        // The local stack adds ?host=<its Unix socket directory>.
        assert.match(local.DATABASE_URL, new RegExp(`/${svc.database}(\\?host=[^&]+)?$`));
      } else {
        assert.equal(env.DATABASE_URL, undefined);
      }
    }
  });

  it('resolves every placeholder of every connector JSON in both Connect workers', () => {
    const composeConnect = compose.services.connect.environment ?? {};
    const localConnect = connectEnv(config);
    const defs = connectorDefinitions();
    assert.deepEqual(
      defs.map((d) => d.name.replace(/-outbox.*$/, '')).sort(),
      OUTBOX_SERVICES.map((s) => s.name).sort(),
      'one connector per database with an outbox, none for a database without one',
    );
    for (const def of defs) {
      for (const value of Object.values(def.config)) {
        for (const name of placeholders(value)) {
          assert.ok(name in composeConnect, `${def.name}: compose Connect lacks ${name}`);
          assert.ok(name in localConnect, `${def.name}: local Connect lacks ${name}`);
        }
      }
    }
    assert.ok(
      compose.services['register-connectors'].volumes?.some((v) => v.startsWith('./infra/debezium:')),
    );
  });

  it('routes by event type, keys by aggregate id, and carries the envelope as headers in every connector', () => {
    for (const def of connectorDefinitions()) {
      const c = def.config;
      assert.equal(c['plugin.name'], 'pgoutput');
      assert.equal(c['transforms.outbox.type'], 'io.debezium.transforms.outbox.EventRouter');
      assert.equal(c['transforms.outbox.route.by.field'], 'type');
      assert.equal(c['transforms.outbox.table.field.event.key'], 'aggregate_id');
      for (const header of [
        'eventId',
        'eventType',
        'tenantId',
        'sagaId',
        'correlationId',
        'causationId',
        'traceparent',
        'sequence',
      ]) {
        assert.match(
          c['transforms.outbox.table.fields.additional.placement'],
          new RegExp(`:header:${header}(,|$)`),
        );
      }
    }
    const slots = connectorDefinitions().map((d) => d.config['slot.name']);
    assert.equal(new Set(slots).size, slots.length, 'each connector has its own replication slot');
  });

  it('creates the same databases in the compose PostgreSQL init script, Debezium only on those with an outbox', () => {
    const init = readFileSync(join(REPO_ROOT, 'infra', 'docker', 'postgres-init.sh'), 'utf8');
    const list = (name: string) =>
      new RegExp(`^${name}="([a-z_ ]*)"$`, 'm').exec(init)?.[1].trim().split(/\s+/) ?? [];
    assert.deepEqual(
      [...list('OUTBOX_DBS'), ...list('PLAIN_DBS')].sort(),
      DB_SERVICES.map((s) => s.database).sort(),
    );
    assert.deepEqual(list('OUTBOX_DBS').sort(), OUTBOX_SERVICES.map((s) => s.database).sort());
  });

  it('migrates every database of the topology before its app starts', () => {
    for (const svc of DB_SERVICES) {
      const migrate = compose.services[`migrate-${svc.name}`];
      assert.ok(migrate, `compose has no migrate-${svc.name}`);
      assert.equal(migrate.build?.args?.APP, svc.name);
      assert.match(String(migrate.environment?.DATABASE_URL), new RegExp(`/${svc.database}$`));
    }
  });

  it('pins the Kafka and Debezium images to the versions the local stack runs (infra/local/pom.xml)', () => {
    const { kafka, debezium } = pinnedVersions();
    assert.equal(compose.services.kafka.image, `apache/kafka:${kafka}`);
    assert.equal(compose.services['create-topics'].image, `apache/kafka:${kafka}`);
    assert.equal(compose.services.connect.build?.args?.DEBEZIUM_VERSION, debezium);
    assert.equal(compose.services.connect.build?.dockerfile, 'infra/docker/connect.Dockerfile');
    assert.match(
      connectDockerfile,
      new RegExp(`^ARG DEBEZIUM_VERSION=${debezium.replace(/\./g, '\\.')}$`, 'm'),
    );
    assert.match(connectDockerfile, /^FROM quay\.io\/debezium\/connect:\$\{DEBEZIUM_VERSION\}$/m);
  });

  it('starts the Connect worker with the Java agent, as the local stack does', () => {
    assert.match(connectDockerfile, /^RUN mvn -B -q -Dagent\.out=\/out package$/m);
    assert.match(
      connectDockerfile,
      /^ENV KAFKA_OPTS=-javaagent:\/kafka\/connect-agent\/connect-agent\.jar$/m,
    );
  });

  it('creates every topic the local stack creates, and each connector heartbeat topic, before anything uses Kafka', () => {
    const listed = readFileSync(join(REPO_ROOT, 'infra', 'docker', 'topics.txt'), 'utf8')
      .split('\n')
      .filter(Boolean);
    const heartbeats = connectorDefinitions().map(
      (d) => `${d.config['topic.heartbeat.prefix']}.${d.config['topic.prefix']}`,
    );
    assert.deepEqual(listed.sort(), [...SAGA_TOPICS, ...SAGA_TOPICS.map(dlqTopic), ...heartbeats].sort());
    assert.ok(
      compose.services['create-topics'].volumes?.some((v) => v.startsWith('./infra/docker/topics.txt:')),
    );
    assert.equal(
      compose.services.connect.depends_on?.['create-topics']?.condition,
      'service_completed_successfully',
    );
  });

  it('starts each app after the topics exist and, with a database, after its own migrations', () => {
    for (const svc of SERVICES) {
      const deps = compose.services[svc.name].depends_on ?? {};
      assert.equal(deps['create-topics']?.condition, 'service_completed_successfully', `${svc.name}: topics`);
      if (svc.database)
        assert.equal(
          deps[`migrate-${svc.name}`]?.condition,
          'service_completed_successfully',
          `${svc.name}: migrations`,
        );
      // A row written before its connector's slot exists is never relayed (snapshot.mode=no_data).
      if (svc.outbox) assert.equal(deps['register-connectors']?.condition, 'service_completed_successfully');
    }
  });

  it('gives every connector a heartbeat action query on its own database', () => {
    for (const def of connectorDefinitions()) {
      assert.match(def.config['heartbeat.action.query'] ?? '', /debezium_heartbeat/);
      assert.ok(Number(def.config['heartbeat.interval.ms']) > 0);
    }
  });
});
