import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
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
  CONNECT_CLUSTER,
  CONSUMED_TOPICS,
  INTERNAL_PORT,
  KAFKA_CLUSTER,
  MAX_HEAP_SHARE,
  MIGRATE_CONTAINER,
  PUBLIC_READER,
  SECRETISH,
  SECRET_ENV,
  STRIMZI_API,
  connectorJaasEnv,
  dbPodLabel,
  heartbeatTopicOf,
  imageOf,
  kafkaUserOf,
  migrateJobOf,
  ownTopicsOf,
  placeholdersOf,
  connectorDefinitions,
} from './manifests';
import { K8sObject, kustomize, kustomizeUnavailable } from './kustomize';

/** The checks every overlay must pass, on what the real `kubectl kustomize` renders. */

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
  failureThreshold?: number;
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

interface Job extends K8sObject {
  spec: { template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
}
interface Acl {
  resource: { type: string; name?: string; patternType?: string };
  operations: string[];
}
interface NetworkPolicy extends K8sObject {
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: string[];
    egress: {
      to?: { podSelector?: { matchLabels?: Record<string, string> }; ipBlock?: object }[];
      ports?: { port: number }[];
    }[];
  };
}

const OVERLAYS = ['dev', 'prod'] as const;
const SKIP = kustomizeUnavailable();
const rendered = new Map<string, K8sObject[]>();
const render = (overlay: string): K8sObject[] => {
  if (SKIP) return [];
  if (!rendered.has(overlay))
    rendered.set(overlay, kustomize(join(REPO_ROOT, 'infra', 'k8s', 'overlays', overlay)));
  return rendered.get(overlay) as K8sObject[];
};
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
const K8S_ONLY_ENV = new Set([
  'SHUTDOWN_TIMEOUT_MS',
  'TENANTS',
  // The local stack's payment and PSP simulator read the dev seed's PSP accounts (DEV_SEED=true).
  'TENANT_PSP_CREDENTIALS',
  'NODE_OPTIONS',
  'INTERNAL_PORT',
  'KAFKA_SASL_MECHANISM',
  'KAFKA_SASL_USERNAME',
  'KAFKA_SASL_PASSWORD',
  'KAFKA_SSL',
  'KAFKA_SSL_CA_FILE',
  'REDIS_PASSWORD',
]);

for (const overlay of OVERLAYS) {
  (SKIP ? describe.skip : describe)(`infra/k8s/overlays/${overlay}`, () => {
    const objects = render(overlay);
    const deployments = ofKind<Deployment>(objects, 'Deployment');
    const jobs = ofKind<Job>(objects, 'Job');
    /** Every pod template: the Deployments and the migration Jobs. */
    const workloads = [...deployments, ...jobs];
    const configOf = (name: string) =>
      (named(objects, 'ConfigMap', name)?.data as Record<string, string> | undefined) ?? undefined;
    const expected = overlay === 'dev' ? SERVICES : DB_SERVICES;

    it('renders one Deployment per app of the topology, each with its own image', () => {
      assert.deepEqual(deployments.map((d) => d.metadata.name).sort(), expected.map((s) => s.name).sort());
      for (const d of workloads) {
        const app = d.metadata.labels?.['app.kubernetes.io/name'] ?? '';
        for (const c of [
          ...d.spec.template.spec.containers,
          ...(d.spec.template.spec.initContainers ?? []),
        ]) {
          const [repo, tag] = c.image.split(':');
          assert.equal(repo, imageOf(app), `${d.metadata.name}/${c.name}: image ${c.image}`);
          assert.ok(tag, `${d.metadata.name}/${c.name}: image without a tag`);
          if (overlay === 'prod') assert.match(tag, /^\d+\.\d+\.\d+/, `prod pins a version, not ${tag}`);
        }
      }
    });

    it("pins every app's image in the overlay's images list", () => {
      const kustomization = parse(
        readFileSync(join(REPO_ROOT, 'infra', 'k8s', 'overlays', overlay, 'kustomization.yaml'), 'utf8'),
      ) as { images?: { name: string; newTag?: string }[] };
      const pinned = new Map((kustomization.images ?? []).map((i) => [i.name, i.newTag]));
      for (const svc of expected) assert.ok(pinned.get(imageOf(svc.name)), `${svc.name}: not in images`);
    });

    it('puts every object in the overlay namespace', () => {
      for (const o of objects)
        assert.ok(o.metadata.namespace, `${o.kind}/${o.metadata.name} has no namespace`);
      assert.equal(new Set(objects.map((o) => o.metadata.namespace)).size, 1);
    });

    it('runs every container non-root with a read-only root filesystem and no privilege escalation', () => {
      for (const d of workloads) {
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
      for (const d of workloads) {
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
      }
    });

    it('caps every V8 heap below 75% of its container memory limit', () => {
      for (const d of workloads) {
        const app = d.metadata.labels?.['app.kubernetes.io/name'] ?? '';
        // Buffers, code and stacks live outside the old space: the kernel kills before V8 collects otherwise.
        const heap = /--max-old-space-size=(\d+)/.exec(configOf(`${app}-config`)?.NODE_OPTIONS ?? '');
        assert.ok(heap, `${d.metadata.name}: NODE_OPTIONS caps the heap`);
        for (const c of d.spec.template.spec.containers) {
          const limit = quantity(c.resources?.limits?.memory ?? '0');
          assert.ok(
            Number(heap[1]) * 1024 ** 2 < MAX_HEAP_SHARE * limit,
            `${d.metadata.name}/${c.name}: heap ${heap[1]} MB is not below ${MAX_HEAP_SHARE} x ${c.resources?.limits?.memory}`,
          );
        }
      }
    });

    it('probes /health/live and /health/ready on the internal port, the app port of the topology apart', () => {
      for (const d of deployments) {
        const svc = SERVICES.find((s) => s.name === d.metadata.name);
        const app = d.spec.template.spec.containers.find((c) => c.name === APP_CONTAINER);
        assert.ok(svc && app, `${d.metadata.name}: container ${APP_CONTAINER}`);
        assert.deepEqual(app.ports, [
          { name: 'http', containerPort: svc.defaultPort },
          { name: 'internal', containerPort: INTERNAL_PORT },
        ]);
        assert.deepEqual(app.livenessProbe?.httpGet, { path: '/health/live', port: 'internal' });
        assert.deepEqual(app.readinessProbe?.httpGet, { path: '/health/ready', port: 'internal' });
        // A blip shorter than failureThreshold x period keeps the pod in its Service.
        assert.ok(
          (app.readinessProbe?.failureThreshold ?? 1) >= 3,
          `${d.metadata.name}: readiness threshold`,
        );
        const config = configOf(`${d.metadata.name}-config`);
        assert.equal(config?.PORT, String(svc.defaultPort));
        assert.equal(config?.INTERNAL_PORT, String(INTERNAL_PORT));
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
      for (const d of workloads) {
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
      for (const d of workloads) {
        const name = d.metadata.labels?.['app.kubernetes.io/name'] ?? '';
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
          // PSP secret keys and webhook secrets reach only the payment service and the PSP.
          assert.equal(
            names.includes('TENANT_PSP_CREDENTIALS'),
            name === 'payment' || name === 'psp-simulator',
            `${name}/${c.name}: TENANT_PSP_CREDENTIALS`,
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

    it('applies migrations once per release in a Job of the same image, never in an init container', () => {
      for (const d of deployments) {
        const svc = SERVICES.find((s) => s.name === d.metadata.name);
        assert.deepEqual(d.spec.template.spec.initContainers ?? [], [], `${d.metadata.name}: init container`);
        const job = named<Job>(objects, 'Job', migrateJobOf(d.metadata.name));
        if (!svc?.database) {
          assert.equal(job, undefined, `${d.metadata.name} has no database to migrate`);
          continue;
        }
        assert.ok(job, `${d.metadata.name}: Job ${migrateJobOf(d.metadata.name)}`);
        const [migrate] = job.spec.template.spec.containers;
        assert.equal(migrate.name, MIGRATE_CONTAINER);
        assert.deepEqual(
          [...(migrate.command ?? []), ...(migrate.args ?? [])],
          ['node', 'dist/src/migrate.js'],
        );
        assert.equal(
          migrate.image,
          d.spec.template.spec.containers[0].image,
          'the image of the app it migrates',
        );
        assert.equal(
          job.metadata.annotations &&
            (job.metadata.annotations as Record<string, string>)['argocd.argoproj.io/hook'],
          'PreSync',
        );
      }
      assert.equal(
        jobs.length,
        deployments.filter((d) => SERVICES.find((s) => s.name === d.metadata.name)?.database).length,
      );
    });

    it('has a Service, a PodDisruptionBudget and a CPU HPA per Deployment (one fixed pod for the simulator)', () => {
      // The saga topics the consumers share (a heartbeat topic has one partition and no consumer).
      const topics = ofKind(objects, 'KafkaTopic').filter((t) =>
        (SAGA_TOPICS as readonly string[]).includes((t.spec as { topicName: string }).topicName),
      );
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
      const heartbeats = connectorDefinitions().map(heartbeatTopicOf);
      assert.deepEqual(names, [...SAGA_TOPICS, ...SAGA_TOPICS.map(dlqTopic), ...heartbeats].sort());
      for (const t of topics) {
        assert.equal(t.metadata.labels?.['strimzi.io/cluster'], KAFKA_CLUSTER);
        assert.ok(Number(t.spec.config['min.insync.replicas']) <= t.spec.replicas);
        if (overlay === 'prod') {
          assert.ok(t.spec.replicas >= 3, `${t.spec.topicName}: replicas`);
          assert.ok(Number(t.spec.config['min.insync.replicas']) >= 2, `${t.spec.topicName}: min ISR`);
        }
      }
      for (const def of connectorDefinitions()) {
        assert.ok(def.config['heartbeat.action.query'], `${def.name}: heartbeat.action.query`);
        assert.ok(Number(def.config['heartbeat.interval.ms']) > 0, `${def.name}: heartbeat.interval.ms`);
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
          // (each connector's producer credentials are checked with the KafkaUsers below)
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

    it('gives every Deployment a NetworkPolicy: its DB, Kafka, Redis where used, the PSP for payment only', () => {
      const policies = ofKind<NetworkPolicy>(objects, 'NetworkPolicy');
      for (const d of workloads) {
        const podLabels = d.spec.template.metadata.labels;
        const mine = policies.filter((p) =>
          Object.entries(p.spec.podSelector.matchLabels).every(([k, v]) => podLabels[k] === v),
        );
        assert.equal(mine.length, 1, `${d.metadata.name}: ${mine.length} NetworkPolicies select its pods`);
        const [policy] = mine;
        assert.deepEqual(
          [...policy.spec.policyTypes].sort(),
          ['Egress', 'Ingress'],
          `${d.metadata.name}: policyTypes`,
        );
        const app = podLabels['app.kubernetes.io/name'];
        const svc = SERVICES.find((s) => s.name === app);
        const targets = policy.spec.egress.flatMap((r) => r.to ?? []);
        const dbs = targets.filter((t) =>
          Object.keys(t.podSelector?.matchLabels ?? {}).some((k) => k.startsWith('db.checkout-saga.dev/')),
        );
        assert.deepEqual(
          dbs.map((t) => Object.keys(t.podSelector?.matchLabels ?? {})[0]),
          svc?.database ? [dbPodLabel(app)] : [],
          `${d.metadata.name}: reaches only its own database`,
        );
        const redis = targets.some((t) => t.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'redis');
        assert.equal(
          redis,
          (app === 'order' || app === 'inventory') && d.kind === 'Deployment',
          `${d.metadata.name}: Redis`,
        );
        const psp = targets.some(
          (t) => t.ipBlock || t.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'psp-simulator',
        );
        assert.equal(psp, app === 'payment' && d.kind === 'Deployment', `${d.metadata.name}: PSP`);
        const kafka = targets.some(
          (t) => t.podSelector?.matchLabels?.['strimzi.io/cluster'] === KAFKA_CLUSTER,
        );
        assert.equal(kafka, d.kind === 'Deployment', `${d.metadata.name}: Kafka`);
      }
    });

    it('scrapes every Deployment with a ServiceMonitor on the internal port, and carries the runbook alerts', () => {
      for (const d of deployments) {
        const name = d.metadata.name;
        const monitor = named(objects, 'ServiceMonitor', name)?.spec as
          | { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string }[] }
          | undefined;
        assert.ok(monitor, `${name}: ServiceMonitor`);
        const service = named(objects, 'Service', name)?.spec as { ports: { name: string; port: number }[] };
        assert.deepEqual(monitor.selector.matchLabels, { 'app.kubernetes.io/name': name });
        assert.deepEqual(
          monitor.endpoints.map((e) => [e.port, e.path]),
          [['internal', '/metrics']],
        );
        assert.ok(
          service.ports.some((p) => p.name === 'internal' && p.port === INTERNAL_PORT),
          `${name}: internal port`,
        );
        const rule = named(objects, 'PrometheusRule', name)?.spec as
          { groups: { rules: { alert: string; expr: string }[] }[] } | undefined;
        const alerts = rule?.groups.flatMap((g) => g.rules) ?? [];
        assert.ok(
          alerts.some((a) => a.alert === 'CheckoutTargetDown'),
          `${name}: PrometheusRule`,
        );
        const svc = SERVICES.find((s) => s.name === name);
        if (svc?.outbox)
          assert.ok(alerts.some((a) => a.expr.includes('outbox_oldest_unconfirmed_age_seconds')));
        if (CONSUMED_TOPICS[svc?.name ?? 'order'].length)
          assert.ok(
            alerts.some((a) => a.expr.includes('messaging_dlq_messages')),
            `${name}: DLQ alert`,
          );
      }
    });

    it('has a KafkaUser per Deployment whose write ACLs are exactly the topics it writes, nobody else’s', () => {
      const users = ofKind(objects, 'KafkaUser');
      const topicNames = new Set(
        ofKind(objects, 'KafkaTopic').map((t) => (t.spec as { topicName: string }).topicName),
      );
      const aclsOf = (name: string) =>
        (named(objects, 'KafkaUser', name)?.spec as { authorization: { acls: Acl[] } } | undefined)
          ?.authorization.acls ?? [];
      const writes = (name: string) =>
        aclsOf(name)
          .filter((a) => a.resource.type === 'topic' && a.operations.includes('Write'))
          .map((a) => a.resource.name as string);
      const defs = connectorDefinitions();
      for (const d of deployments) {
        const name = d.metadata.name;
        const user = named(objects, 'KafkaUser', kafkaUserOf(name));
        assert.ok(user, `${name}: KafkaUser`);
        assert.equal(user.metadata.labels?.['strimzi.io/cluster'], KAFKA_CLUSTER);
        const def = defs.find((x) => x.name === `${name}-outbox`);
        const own = def ? [...ownTopicsOf(name), heartbeatTopicOf(def)] : [];
        const dlqs = CONSUMED_TOPICS[name as keyof typeof CONSUMED_TOPICS].map(dlqTopic);
        assert.deepEqual(writes(kafkaUserOf(name)).sort(), [...own, ...dlqs].sort(), `${name}: write ACLs`);
        for (const t of [...own, ...dlqs])
          assert.ok(topicNames.has(t), `${name} writes ${t}, which is not a KafkaTopic`);
        for (const t of CONSUMED_TOPICS[name as keyof typeof CONSUMED_TOPICS])
          assert.ok(
            aclsOf(kafkaUserOf(name)).some((a) => a.resource.name === t && a.operations.includes('Read')),
            `${name}: reads ${t}`,
          );
      }
      // Every KafkaTopic is written by exactly one identity (its owner's events and heartbeat, or a DLQ's consumer).
      for (const topic of topicNames) {
        const writers = users
          .filter((u) => writes(u.metadata.name).includes(topic))
          .map((u) => u.metadata.name);
        if (topic.endsWith('.dlq')) assert.ok(writers.length >= 1, `${topic}: no consumer may park on it`);
        else assert.equal(writers.length, 1, `${topic}: written by ${writers.join(', ') || 'nobody'}`);
      }
      assert.deepEqual(writes(PUBLIC_READER.user), [], 'the order.paid reader writes nothing');
      assert.deepEqual(
        aclsOf(PUBLIC_READER.user)
          .filter((a) => a.resource.type === 'topic')
          .map((a) => a.resource.name),
        ['order.paid'],
      );
      // Connect produces each connector's records with that app's credentials.
      const connect = ofKind(objects, 'KafkaConnect')[0].spec as {
        config: Record<string, string>;
        template: { connectContainer: { env: EnvVar[] } };
      };
      assert.equal(connect.config['connector.client.config.override.policy'], 'Principal');
      for (const c of ofKind(objects, 'KafkaConnector')) {
        const def = defs.find((x) => x.name === c.metadata.name);
        assert.ok(def);
        const env = connect.template.connectContainer.env.find((e) => e.name === connectorJaasEnv(def));
        assert.equal(
          env?.valueFrom?.secretKeyRef?.name,
          kafkaUserOf(c.metadata.name.replace(/-outbox$/, '')),
        );
        assert.equal(
          (c.spec as { config: Record<string, string> }).config['producer.override.sasl.jaas.config'],
          `\${env:${connectorJaasEnv(def)}}`,
        );
      }
      assert.deepEqual(
        writes(CONNECT_CLUSTER).filter((t) => topicNames.has(t) && !t.startsWith(CONNECT_CLUSTER)),
        [],
      );
    });

    it('writes every Strimzi object as kafka.strimzi.io/v1, Connect with groupId and storage topics in spec', () => {
      const strimzi = objects.filter((o) => o.apiVersion.startsWith('kafka.strimzi.io/'));
      assert.ok(strimzi.length > 0);
      for (const o of strimzi) assert.equal(o.apiVersion, STRIMZI_API, `${o.kind}/${o.metadata.name}`);
      const [connect] = ofKind(objects, 'KafkaConnect');
      const spec = connect.spec as Record<string, unknown> & {
        config: Record<string, unknown>;
        build: { plugins: { artifacts: { url: string; sha512sum?: string }[] }[] };
      };
      for (const field of ['groupId', 'configStorageTopic', 'offsetStorageTopic', 'statusStorageTopic'])
        assert.equal(typeof spec[field], 'string', `KafkaConnect spec.${field}`);
      for (const key of ['group.id', 'config.storage.topic', 'offset.storage.topic', 'status.storage.topic'])
        assert.equal(spec.config[key], undefined, `KafkaConnect spec.config.${key} belongs in spec`);
      for (const a of spec.build.plugins.flatMap((p) => p.artifacts))
        assert.match(a.sha512sum ?? '', /^[0-9a-f]{128}$/, `${a.url}: sha512sum`);
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

(SKIP ? describe.skip : describe)('overlay differences', () => {
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
