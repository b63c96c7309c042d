import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SAGA_TOPICS, dlqTopic } from '@checkout/contracts';
import {
  DB_SERVICES,
  OUTBOX_SERVICES,
  REPO_ROOT,
  SERVICES,
  dbEnvPrefix,
  loadStackConfig,
  serviceEnv,
} from '@checkout/local-stack';
import {
  APP_CONTAINER,
  KAFKA_CLUSTER,
  MIGRATE_CONTAINER,
  SECRETISH,
  SECRET_ENV,
  imageOf,
  placeholdersOf,
  connectorDefinitions,
} from './manifests';
import { K8sObject, renderKustomization } from './render';

/** The checks every overlay must pass; kustomize itself is not installed, the overlays use our subset. */

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string };
    configMapKeyRef?: { name: string; key: string };
  };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  ports?: { name: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
}
interface PodSpec {
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: Container[];
  initContainers?: Container[];
}
interface Deployment extends K8sObject {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

const OVERLAYS = ['dev', 'prod'] as const;
const render = (overlay: string) => renderKustomization(join(REPO_ROOT, 'infra', 'k8s', 'overlays', overlay));
const ofKind = <T extends K8sObject = K8sObject>(objects: K8sObject[], kind: string) =>
  objects.filter((o) => o.kind === kind) as T[];
const named = <T extends K8sObject = K8sObject>(objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name) as T | undefined;

/** Kubernetes quantities: cpu in millicores, memory in bytes. */
export function quantity(value: string | number): number {
  const text = String(value);
  const m = /^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G)?$/.exec(text);
  if (!m) throw new Error(`not a quantity: ${text}`);
  const n = Number(m[1]);
  const unit = m[2] ?? '';
  const factor: Record<string, number> = {
    '': 1,
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    Ki: 1024,
    Mi: 1024 ** 2,
    Gi: 1024 ** 3,
    Ti: 1024 ** 4,
  };
  return n * factor[unit];
}

/** Env names a service may get beyond those of the local stack's serviceEnv. */
const K8S_ONLY_ENV = new Set(['SHUTDOWN_TIMEOUT_MS', 'TENANTS', 'NODE_OPTIONS']);

for (const overlay of OVERLAYS) {
  describe(`infra/k8s/overlays/${overlay}`, () => {
    const objects = render(overlay);
    const deployments = ofKind<Deployment>(objects, 'Deployment');
    const configOf = (name: string) =>
      (named(objects, 'ConfigMap', name)?.data as Record<string, string> | undefined) ?? undefined;
    const expected = overlay === 'dev' ? SERVICES : DB_SERVICES;

    it('renders one Deployment per app of the topology, each with its own image', () => {
      assert.deepEqual(deployments.map((d) => d.metadata.name).sort(), expected.map((s) => s.name).sort());
      for (const d of deployments) {
        for (const c of [
          ...d.spec.template.spec.containers,
          ...(d.spec.template.spec.initContainers ?? []),
        ]) {
          const [repo, tag] = c.image.split(':');
          assert.equal(repo, imageOf(d.metadata.name), `${d.metadata.name}/${c.name}: image ${c.image}`);
          assert.ok(tag, `${d.metadata.name}/${c.name}: image without a tag`);
          if (overlay === 'prod') assert.match(tag, /^\d+\.\d+\.\d+/, `prod pins a version, not ${tag}`);
        }
      }
    });

    it('puts every object in the overlay namespace', () => {
      for (const o of objects)
        assert.ok(o.metadata.namespace, `${o.kind}/${o.metadata.name} has no namespace`);
      assert.equal(new Set(objects.map((o) => o.metadata.namespace)).size, 1);
    });

    it('runs every container non-root with a read-only root filesystem and no privilege escalation', () => {
      for (const d of deployments) {
        const pod = d.spec.template.spec;
        assert.equal(pod.securityContext?.runAsNonRoot, true, `${d.metadata.name}: runAsNonRoot`);
        assert.notEqual(pod.securityContext?.runAsUser, 0, `${d.metadata.name}: runAsUser 0`);
        for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
          const where = `${d.metadata.name}/${c.name}`;
          assert.equal(c.securityContext?.readOnlyRootFilesystem, true, `${where}: readOnlyRootFilesystem`);
          assert.equal(
            c.securityContext?.allowPrivilegeEscalation,
            false,
            `${where}: allowPrivilegeEscalation`,
          );
          assert.notEqual(c.securityContext?.runAsUser, 0, `${where}: runAsUser 0`);
          assert.ok(
            c.securityContext?.capabilities?.drop?.includes('ALL'),
            `${where}: capabilities not dropped`,
          );
        }
      }
    });

    it('gives every container cpu and memory requests and limits, requests within limits', () => {
      for (const d of deployments) {
        const pod = d.spec.template.spec;
        for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
          const where = `${d.metadata.name}/${c.name}`;
          for (const r of ['cpu', 'memory']) {
            const req = c.resources?.requests?.[r];
            const lim = c.resources?.limits?.[r];
            assert.ok(req && lim, `${where}: ${r} request and limit`);
            assert.ok(quantity(req) <= quantity(lim), `${where}: ${r} request ${req} above limit ${lim}`);
          }
        }
        // The V8 heap must fit in the memory limit, or the kernel kills before V8 collects.
        const heap = /--max-old-space-size=(\d+)/.exec(
          configOf(`${d.metadata.name}-config`)?.NODE_OPTIONS ?? '',
        );
        assert.ok(heap, `${d.metadata.name}: NODE_OPTIONS caps the heap`);
        const app = pod.containers.find((c) => c.name === APP_CONTAINER) as Container;
        assert.ok(Number(heap[1]) * 1024 ** 2 < 0.9 * quantity(app.resources?.limits?.memory ?? '0'));
      }
    });

    it('probes /health/live and /health/ready on the named internal port (INTERNAL_PORT)', () => {
      for (const d of deployments) {
        const svc = SERVICES.find((s) => s.name === d.metadata.name);
        const app = d.spec.template.spec.containers.find((c) => c.name === APP_CONTAINER);
        assert.ok(svc && app, `${d.metadata.name}: container ${APP_CONTAINER}`);
        assert.deepEqual(app.ports, [
          { name: 'http', containerPort: svc.defaultPort },
          { name: 'internal', containerPort: svc.defaultPort + 6000 },
        ]);
        assert.deepEqual(app.livenessProbe?.httpGet, { path: '/health/live', port: 'internal' });
        assert.deepEqual(app.readinessProbe?.httpGet, { path: '/health/ready', port: 'internal' });
        const config = configOf(`${d.metadata.name}-config`);
        assert.equal(config?.PORT, String(svc.defaultPort));
        assert.equal(config?.INTERNAL_PORT, String(svc.defaultPort + 6000));
        assert.equal(config?.SERVICE_NAME, svc.name);
      }
    });

    it('waits longer than the drain time (preStop + SHUTDOWN_TIMEOUT_MS) before killing', () => {
      for (const d of deployments) {
        const pod = d.spec.template.spec;
        const app = pod.containers.find((c) => c.name === APP_CONTAINER) as Container;
        const drainMs = Number(configOf(`${d.metadata.name}-config`)?.SHUTDOWN_TIMEOUT_MS ?? 20_000);
        const preStop = app.lifecycle?.preStop?.exec?.command;
        const preStopMs = preStop?.[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
        const graceMs = (pod.terminationGracePeriodSeconds ?? 30) * 1000;
        assert.ok(
          graceMs > drainMs + preStopMs,
          `${d.metadata.name}: grace ${graceMs} <= ${drainMs} + ${preStopMs}`,
        );
      }
    });

    it('never carries a literal secret: credentials come from secretKeyRef, no Secret object is committed', () => {
      assert.deepEqual(ofKind(objects, 'Secret'), [], 'Secrets are created outside git');
      for (const cm of ofKind(objects, 'ConfigMap'))
        for (const key of Object.keys((cm.data as object) ?? {}))
          assert.doesNotMatch(key, SECRETISH, `ConfigMap ${cm.metadata.name} holds ${key}`);
      for (const d of deployments) {
        const pod = d.spec.template.spec;
        for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
          const where = `${d.metadata.name}/${c.name}`;
          for (const e of c.env ?? []) {
            const secretish = SECRETISH.test(e.name) || (SECRET_ENV as readonly string[]).includes(e.name);
            assert.ok(
              e.value === undefined || e.valueFrom === undefined,
              `${where}: ${e.name} value and valueFrom`,
            );
            if (secretish) {
              assert.ok(e.valueFrom?.secretKeyRef, `${where}: ${e.name} must come from a Secret`);
              assert.equal(e.value, undefined, `${where}: ${e.name} has a literal value`);
            }
          }
          for (const from of c.envFrom ?? []) {
            assert.equal(from.secretRef, undefined, `${where}: name each secret env explicitly`);
            if (from.configMapRef)
              assert.ok(
                configOf(from.configMapRef.name),
                `${where}: ConfigMap ${from.configMapRef.name} exists`,
              );
          }
        }
      }
    });

    it('sets only env names the local stack also sets, DATABASE_URL exactly for services with a database', () => {
      const config = loadStackConfig();
      for (const d of deployments) {
        const name = d.metadata.name;
        const local = serviceEnv(config, name);
        const svc = SERVICES.find((s) => s.name === name);
        for (const c of [
          ...d.spec.template.spec.containers,
          ...(d.spec.template.spec.initContainers ?? []),
        ]) {
          const names = [
            ...(c.env ?? []).map((e) => e.name),
            ...(c.envFrom ?? []).flatMap((f) => Object.keys(configOf(f.configMapRef?.name ?? '') ?? {})),
          ];
          for (const n of names)
            assert.ok(
              n in local || K8S_ONLY_ENV.has(n),
              `${name}/${c.name}: ${n} is not set by the local stack`,
            );
          assert.equal(
            names.includes('DATABASE_URL'),
            Boolean(svc?.database),
            `${name}/${c.name}: DATABASE_URL`,
          );
          assert.ok(names.includes('TENANTS'), `${name}/${c.name}: TENANTS`);
        }
      }
    });

    it('applies migrations in an init container before the new version serves', () => {
      for (const d of deployments) {
        const svc = SERVICES.find((s) => s.name === d.metadata.name);
        const init = d.spec.template.spec.initContainers ?? [];
        if (!svc?.database) {
          assert.deepEqual(init, [], `${d.metadata.name} has no database to migrate`);
          continue;
        }
        const migrate = init.find((c) => c.name === MIGRATE_CONTAINER);
        assert.ok(migrate, `${d.metadata.name}: init container ${MIGRATE_CONTAINER}`);
        assert.deepEqual(
          [...(migrate.command ?? []), ...(migrate.args ?? [])],
          ['node', 'dist/src/migrate.js'],
        );
        const app = d.spec.template.spec.containers[0];
        assert.equal(migrate.image, app.image, 'the same image as the app it migrates for');
      }
    });

    it('has a Service, a PodDisruptionBudget and a CPU HPA per Deployment (one fixed pod for the simulator)', () => {
      const topics = ofKind(objects, 'KafkaTopic');
      const partitions = Math.min(...topics.map((t) => (t.spec as { partitions: number }).partitions));
      for (const d of deployments) {
        const name = d.metadata.name;
        const podLabels = d.spec.template.metadata.labels;
        const selects = (sel: Record<string, string> | undefined) =>
          Boolean(sel) && Object.entries(sel ?? {}).every(([k, v]) => podLabels[k] === v);
        assert.ok(selects(d.spec.selector.matchLabels), `${name}: selector matches its pods`);
        const service = named(objects, 'Service', name)?.spec as
          { selector: Record<string, string>; ports: { targetPort: string }[] } | undefined;
        assert.ok(service && selects(service.selector), `${name}: Service`);
        assert.equal(service.ports[0].targetPort, 'http');
        const pdb = named(objects, 'PodDisruptionBudget', name)?.spec as
          { selector: { matchLabels: Record<string, string> }; maxUnavailable?: number } | undefined;
        assert.ok(pdb && selects(pdb.selector.matchLabels), `${name}: PodDisruptionBudget`);
        const hpa = named(objects, 'HorizontalPodAutoscaler', name)?.spec as
          | {
              scaleTargetRef: { kind: string; name: string };
              minReplicas: number;
              maxReplicas: number;
              metrics: { resource?: { name: string } }[];
            }
          | undefined;
        if (name === 'psp-simulator') {
          // Its ledger lives in memory: one pod, never autoscaled.
          assert.equal(hpa, undefined);
          assert.ok((d.spec.replicas ?? 1) === 1);
          continue;
        }
        assert.ok(hpa, `${name}: HorizontalPodAutoscaler`);
        assert.deepEqual(hpa.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name });
        assert.ok(
          hpa.metrics.some((m) => m.resource?.name === 'cpu'),
          `${name}: HPA on cpu`,
        );
        assert.ok(hpa.minReplicas >= 1 && hpa.minReplicas <= hpa.maxReplicas);
        assert.ok(hpa.maxReplicas <= partitions, `${name}: more consumers than partitions would sit idle`);
        assert.equal(d.spec.replicas, undefined, `${name}: the HPA owns replicas`);
        if (overlay === 'prod') assert.ok(hpa.minReplicas >= 2, `${name}: prod survives one pod down`);
      }
    });

    it('declares every saga topic and its DLQ, keyed alike, on the Strimzi cluster', () => {
      const topics = ofKind(objects, 'KafkaTopic') as (K8sObject & {
        spec: {
          topicName: string;
          partitions: number;
          replicas: number;
          config: Record<string, number | string>;
        };
      })[];
      const names = topics.map((t) => t.spec.topicName).sort();
      assert.deepEqual(names, [...SAGA_TOPICS, ...SAGA_TOPICS.map(dlqTopic)].sort());
      for (const t of topics) {
        assert.equal(t.metadata.labels?.['strimzi.io/cluster'], KAFKA_CLUSTER);
        assert.ok(Number(t.spec.config['min.insync.replicas']) <= t.spec.replicas);
        if (overlay === 'prod') {
          assert.ok(t.spec.replicas >= 3, `${t.spec.topicName}: replicas`);
          assert.ok(Number(t.spec.config['min.insync.replicas']) >= 2, `${t.spec.topicName}: min ISR`);
        }
      }
      for (const topic of SAGA_TOPICS) {
        const main = topics.find((t) => t.spec.topicName === topic);
        const dlq = topics.find((t) => t.spec.topicName === dlqTopic(topic));
        assert.equal(main?.spec.partitions, dlq?.spec.partitions, `${topic}: DLQ partitions`);
      }
    });

    it('runs every infra/debezium connector on the Connect cluster, every placeholder provided', () => {
      const [connect] = ofKind(objects, 'KafkaConnect');
      assert.ok(connect, 'KafkaConnect');
      const spec = connect.spec as {
        config: Record<string, string>;
        template: { connectContainer: { env: EnvVar[] } };
      };
      assert.equal(spec.config['config.providers'], 'env');
      const env = new Map(spec.template.connectContainer.env.map((e) => [e.name, e]));
      const connectors = ofKind(objects, 'KafkaConnector');
      const defs = connectorDefinitions();
      assert.deepEqual(connectors.map((c) => c.metadata.name).sort(), defs.map((d) => d.name).sort());
      for (const c of connectors)
        assert.equal(c.metadata.labels?.['strimzi.io/cluster'], connect.metadata.name);
      for (const def of defs)
        for (const name of placeholdersOf(def)) {
          const e = env.get(name);
          assert.ok(e?.valueFrom, `${def.name}: Connect lacks ${name}`);
          if (SECRETISH.test(name) || name.startsWith('CDC_DB_'))
            assert.ok(e.valueFrom.secretKeyRef, `${name} must come from a Secret`);
          else {
            const ref = e.valueFrom.configMapKeyRef;
            assert.ok(
              ref && configOf(ref.name)?.[ref.key],
              `${name}: ConfigMap ${ref?.name} has ${ref?.key}`,
            );
          }
        }
    });

    it('relays the outbox of every service that has one, and never reads a database without one', () => {
      const [connect] = ofKind(objects, 'KafkaConnect');
      const env = (connect.spec as { template: { connectContainer: { env: EnvVar[] } } }).template
        .connectContainer.env;
      const relayed = ofKind(objects, 'KafkaConnector').map(
        (c) => (c.spec as { config: Record<string, string> }).config['database.dbname'],
      );
      for (const svc of OUTBOX_SERVICES)
        assert.ok(
          relayed.includes(`\${env:${dbEnvPrefix(svc.name)}_NAME}`) &&
            env.some((e) => e.name === `${dbEnvPrefix(svc.name)}_NAME`),
          `${svc.name}: a KafkaConnector relays its outbox`,
        );
      for (const svc of DB_SERVICES.filter((s) => !s.outbox)) {
        assert.ok(
          !env.some((e) => e.name.startsWith(`${dbEnvPrefix(svc.name)}_`)),
          `${svc.name} publishes nothing: Connect must not know its database`,
        );
        assert.ok(
          deployments.some((d) => d.metadata.name === svc.name),
          `${svc.name} runs (with its own database) although it has no connector`,
        );
      }
    });
  });
}

describe('overlay differences', () => {
  it('only dev runs the PSP simulator and the dev tenant seed', () => {
    const dev = render('dev');
    const prod = render('prod');
    assert.ok(named(dev, 'Deployment', 'psp-simulator'));
    assert.equal(named(prod, 'Deployment', 'psp-simulator'), undefined);
    for (const cm of ofKind(prod, 'ConfigMap'))
      assert.notEqual((cm.data as Record<string, string>).DEV_SEED, 'true', `${cm.metadata.name}: DEV_SEED`);
    assert.equal((named(dev, 'ConfigMap', 'order-config')?.data as Record<string, string>).DEV_SEED, 'true');
  });
});
