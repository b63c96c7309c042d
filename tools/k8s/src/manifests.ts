import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SAGA_TOPICS, dlqTopic } from '@checkout/contracts';
import {
  ConnectorDefinition,
  REPO_ROOT,
  SERVICES,
  ServiceSpec,
  connectorDefinitions,
} from '@checkout/local-stack';
import { K8sObject } from './render';

/**
 * The Kubernetes base, built from the one list of services (infra/local topology), the connector JSON of
 * infra/debezium and the saga topics of libs/contracts. `generate.ts` writes it to infra/k8s/base; a spec checks
 * the committed files are what this module produces, and another renders the overlays and checks the rules.
 */

export const IMAGE_REGISTRY = 'ghcr.io/checkout-saga';
export const IMAGE_TAG = '0.1.0';
export const KAFKA_CLUSTER = 'checkout-kafka';
export const CONNECT_CLUSTER = 'checkout-connect';
export const KAFKA_BOOTSTRAP = `${KAFKA_CLUSTER}-kafka-bootstrap:9092`;
/** The container that runs the app in every Deployment (overlays patch it by this name). */
export const APP_CONTAINER = 'app';
export const MIGRATE_CONTAINER = 'migrate';

/** The port of /metrics and /health/* (libs/service-kit INTERNAL_PORT): the API port + 6000, never in the Service. */
export const internalPortOf = (svc: ServiceSpec): number => svc.defaultPort + 6000;

/** SIGTERM budget of the app (libs/service-kit SHUTDOWN_TIMEOUT_MS): consumers drain, HTTP finishes. */
export const SHUTDOWN_TIMEOUT_MS = 20_000;
/** preStop sleep, so endpoints drop the pod before it stops accepting connections. */
export const PRESTOP_SLEEP_SECONDS = 5;
/** Kubernetes kills after this: preStop + drain + margin. */
export const TERMINATION_GRACE_SECONDS = 45;

/** Partitions of every saga topic (and its DLQ); the key is the order id, so one saga stays in order. */
export const TOPIC_PARTITIONS = 12;

/** Env names holding credentials: they may only come from a secretKeyRef. */
export const SECRET_ENV = ['DATABASE_URL', 'TENANTS', 'REDIS_URL', 'CDC_DB_USER', 'CDC_DB_PASSWORD'] as const;
/** Names that look secret: never a literal value, never a ConfigMap key. */
export const SECRETISH = /(PASSWORD|SECRET|TOKEN|KEY|TENANTS|DATABASE_URL|REDIS_URL|CREDENTIAL)/;

export const imageOf = (app: string): string => `${IMAGE_REGISTRY}/${app}`;
export const dbSecretOf = (app: string): string => `${app}-db`;
export const TENANTS_SECRET = 'checkout-tenants';
export const REDIS_SECRET = 'checkout-redis';
export const CDC_SECRET = 'checkout-cdc';
export const CONNECT_ENV_CONFIGMAP = 'checkout-connect-env';

const labelsOf = (app: string, component = 'service') => ({
  'app.kubernetes.io/name': app,
  'app.kubernetes.io/part-of': 'checkout-saga',
  'app.kubernetes.io/component': component,
});
const selectorOf = (app: string) => ({ 'app.kubernetes.io/name': app });
const urlOf = (svc: ServiceSpec) => `http://${svc.name}:${svc.defaultPort}`;
const serviceByName = (name: ServiceSpec['name']) => SERVICES.find((s) => s.name === name) as ServiceSpec;

/** Settings of one service that are not secrets: the same names `serviceEnv` of the local stack sets. */
export function configData(svc: ServiceSpec): Record<string, string> {
  return {
    NODE_ENV: 'production',
    SERVICE_NAME: svc.name,
    PORT: String(svc.defaultPort),
    INTERNAL_PORT: String(internalPortOf(svc)),
    LOG_LEVEL: 'info',
    KAFKA_BROKERS: KAFKA_BOOTSTRAP,
    PSP_URL: urlOf(serviceByName('psp-simulator')),
    ORDER_URL: urlOf(serviceByName('order')),
    INVENTORY_URL: urlOf(serviceByName('inventory')),
    PAYMENT_URL: urlOf(serviceByName('payment')),
    FULFILLMENT_URL: urlOf(serviceByName('fulfillment')),
    DEV_SEED: 'false',
    SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    NODE_OPTIONS: '--max-old-space-size=384',
  };
}

const secretEnv = (name: string, secret: string, key = name) => ({
  name,
  valueFrom: { secretKeyRef: { name: secret, key } },
});

/** Env of the app (and of its migrate init container): everything secret comes from a Secret. */
export function secretEnvOf(svc: ServiceSpec) {
  const env = [];
  if (svc.database) env.push(secretEnv('DATABASE_URL', dbSecretOf(svc.name)));
  // The hot-SKU gate: order asks it at checkout, inventory re-syncs it from the database.
  if (svc.name === 'order' || svc.name === 'inventory') env.push(secretEnv('REDIS_URL', REDIS_SECRET));
  // Tenants (API key hashes, PSP account keys, webhook secrets) as a JSON array: libs/service-kit tenancy.ts.
  env.push(secretEnv('TENANTS', TENANTS_SECRET));
  return env;
}

const containerSecurity = {
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

const resources = {
  requests: { cpu: '100m', memory: '192Mi' },
  limits: { cpu: '1', memory: '512Mi' },
};

function deployment(svc: ServiceSpec): K8sObject {
  const env = secretEnvOf(svc);
  const envFrom = [{ configMapRef: { name: `${svc.name}-config` } }];
  const image = `${imageOf(svc.name)}:${IMAGE_TAG}`;
  const httpGet = (path: string) => ({ httpGet: { path, port: 'internal' } });
  const migrate = svc.database
    ? {
        initContainers: [
          {
            name: MIGRATE_CONTAINER,
            image,
            imagePullPolicy: 'IfNotPresent',
            // tini stays PID 1 (the image's ENTRYPOINT); only the command changes.
            args: ['node', 'dist/src/migrate.js'],
            envFrom,
            env,
            resources,
            securityContext: containerSecurity,
            volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
          },
        ],
      }
    : {};
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: svc.name, labels: labelsOf(svc.name) },
    spec: {
      revisionHistoryLimit: 5,
      selector: { matchLabels: selectorOf(svc.name) },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: {
          labels: labelsOf(svc.name),
          annotations: {
            'prometheus.io/scrape': 'true',
            'prometheus.io/port': String(internalPortOf(svc)),
            'prometheus.io/path': '/metrics',
          },
        },
        spec: {
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            runAsGroup: 1000,
            fsGroup: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'ScheduleAnyway',
              labelSelector: { matchLabels: selectorOf(svc.name) },
            },
          ],
          ...migrate,
          containers: [
            {
              name: APP_CONTAINER,
              image,
              imagePullPolicy: 'IfNotPresent',
              ports: [
                { name: 'http', containerPort: svc.defaultPort },
                { name: 'internal', containerPort: internalPortOf(svc) },
              ],
              envFrom,
              env,
              resources,
              startupProbe: { ...httpGet('/health/live'), periodSeconds: 2, failureThreshold: 30 },
              livenessProbe: {
                ...httpGet('/health/live'),
                periodSeconds: 10,
                timeoutSeconds: 2,
                failureThreshold: 3,
              },
              readinessProbe: {
                ...httpGet('/health/ready'),
                periodSeconds: 5,
                timeoutSeconds: 3,
                failureThreshold: 2,
              },
              lifecycle: { preStop: { exec: { command: ['sleep', String(PRESTOP_SLEEP_SECONDS)] } } },
              securityContext: containerSecurity,
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }],
        },
      },
    },
  };
}

/** The objects of one service: ConfigMap, Deployment, Service, PodDisruptionBudget and (DB services) HPA. */
export function serviceObjects(svc: ServiceSpec): K8sObject[] {
  const objects: K8sObject[] = [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `${svc.name}-config`, labels: labelsOf(svc.name) },
      data: configData(svc),
    },
    deployment(svc),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: svc.name, labels: labelsOf(svc.name) },
      spec: {
        type: 'ClusterIP',
        selector: selectorOf(svc.name),
        ports: [{ name: 'http', port: svc.defaultPort, targetPort: 'http' }],
      },
    },
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: svc.name, labels: labelsOf(svc.name) },
      spec: { maxUnavailable: 1, selector: { matchLabels: selectorOf(svc.name) } },
    },
  ];
  // The PSP simulator keeps its ledger in memory: exactly one replica, never autoscaled (dev overlay only).
  if (svc.database)
    objects.push({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: svc.name, labels: labelsOf(svc.name) },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: svc.name },
        minReplicas: 2,
        maxReplicas: 6,
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
          },
        ],
        behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
      },
    });
  return objects;
}

/** Every saga topic and its DLQ twin as Strimzi KafkaTopics. */
export function topicObjects(): K8sObject[] {
  const topic = (name: string, dlq: boolean): K8sObject => ({
    apiVersion: 'kafka.strimzi.io/v1beta2',
    kind: 'KafkaTopic',
    metadata: {
      name,
      labels: { 'strimzi.io/cluster': KAFKA_CLUSTER, 'app.kubernetes.io/part-of': 'checkout-saga' },
      annotations: { 'checkout-saga.dev/key': 'orderId (= sagaId): one saga stays on one partition' },
    },
    spec: {
      topicName: name,
      partitions: TOPIC_PARTITIONS,
      replicas: 3,
      config: {
        'cleanup.policy': 'delete',
        'min.insync.replicas': 2,
        'retention.ms': dlq ? 30 * 24 * 3600_000 : 7 * 24 * 3600_000,
      },
    },
  });
  return SAGA_TOPICS.flatMap((t) => [topic(t, false), topic(dlqTopic(t), true)]);
}

/** The Kafka and Debezium versions the local stack runs (infra/local/pom.xml), so both stay in step. */
export function stackVersions(): { kafka: string; debezium: string } {
  const pom = readFileSync(join(REPO_ROOT, 'infra', 'local', 'pom.xml'), 'utf8');
  const get = (prop: string) => {
    const m = new RegExp(`<${prop}>([^<]+)</${prop}>`).exec(pom);
    if (!m) throw new Error(`infra/local/pom.xml has no ${prop}`);
    return m[1];
  };
  return { kafka: get('kafka.version'), debezium: get('debezium.version') };
}

/** The ${env:NAME} placeholders of a connector definition. */
export const placeholdersOf = (def: ConnectorDefinition): string[] =>
  [
    ...new Set(
      Object.values(def.config).flatMap((v) => [...v.matchAll(/\$\{env:([A-Z0-9_]+)\}/g)].map((m) => m[1])),
    ),
  ].sort();

/** The Connect env of the placeholders: hosts and names from a ConfigMap, credentials from a Secret. */
function connectEnvVars(defs: ConnectorDefinition[]) {
  const names = [...new Set(defs.flatMap(placeholdersOf))].sort();
  return names.map((name) =>
    SECRETISH.test(name) || name.startsWith('CDC_DB_')
      ? secretEnv(name, CDC_SECRET)
      : { name, valueFrom: { configMapKeyRef: { name: CONNECT_ENV_CONFIGMAP, key: name } } },
  );
}

/** Where each service database lives, for the Connect worker (overlays patch the hosts). */
export function connectEnvConfigMap(defs: ConnectorDefinition[]): K8sObject {
  const data: Record<string, string> = {};
  for (const name of defs.flatMap(placeholdersOf)) {
    if (name.startsWith('CDC_DB_') || SECRETISH.test(name)) continue;
    const svc = SERVICES.find((s) => name.startsWith(`${s.name.toUpperCase().replace(/-/g, '_')}_DB_`));
    if (name.endsWith('_HOST')) data[name] = 'postgres';
    else if (name.endsWith('_PORT')) data[name] = '5432';
    else if (name.endsWith('_NAME') && svc?.database) data[name] = svc.database;
    else throw new Error(`no value for connector placeholder ${name}`);
  }
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: CONNECT_ENV_CONFIGMAP, labels: labelsOf(CONNECT_CLUSTER, 'cdc') },
    data: Object.fromEntries(Object.entries(data).sort(([a], [b]) => a.localeCompare(b))),
  };
}

/** The Kafka Connect cluster (Strimzi) with the Debezium PostgreSQL plugin and the env config provider. */
export function connectObject(defs: ConnectorDefinition[]): K8sObject {
  const { kafka, debezium } = stackVersions();
  const plugin = `https://repo1.maven.org/maven2/io/debezium/debezium-connector-postgres/${debezium}/debezium-connector-postgres-${debezium}-plugin.tar.gz`;
  return {
    apiVersion: 'kafka.strimzi.io/v1beta2',
    kind: 'KafkaConnect',
    metadata: {
      name: CONNECT_CLUSTER,
      labels: labelsOf(CONNECT_CLUSTER, 'cdc'),
      annotations: { 'strimzi.io/use-connector-resources': 'true' },
    },
    spec: {
      version: kafka,
      replicas: 2,
      bootstrapServers: KAFKA_BOOTSTRAP,
      config: {
        'group.id': CONNECT_CLUSTER,
        'config.storage.topic': '_connect-configs',
        'offset.storage.topic': '_connect-offsets',
        'status.storage.topic': '_connect-status',
        'config.storage.replication.factor': -1,
        'offset.storage.replication.factor': -1,
        'status.storage.replication.factor': -1,
        'offset.flush.interval.ms': 1000,
        'scheduled.rebalance.max.delay.ms': 0,
        'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
        'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
        'config.providers': 'env',
        'config.providers.env.class': 'org.apache.kafka.common.config.provider.EnvVarConfigProvider',
      },
      build: {
        output: {
          type: 'docker',
          image: `${IMAGE_REGISTRY}/connect-debezium:${debezium}`,
          pushSecret: 'checkout-registry',
        },
        plugins: [{ name: 'debezium-connector-postgres', artifacts: [{ type: 'tgz', url: plugin }] }],
      },
      resources: { requests: { cpu: '250m', memory: '768Mi' }, limits: { cpu: '1', memory: '1Gi' } },
      jvmOptions: { '-Xms': '256m', '-Xmx': '512m' },
      template: { connectContainer: { env: connectEnvVars(defs) } },
    },
  };
}

/** One infra/debezium/*.json as a Strimzi KafkaConnector: class and tasks.max move to spec, the rest is config. */
export function connectorObject(def: ConnectorDefinition): K8sObject {
  const { 'connector.class': cls, 'tasks.max': tasks, ...config } = def.config;
  if (!cls) throw new Error(`${def.name}: connector.class is missing`);
  return {
    apiVersion: 'kafka.strimzi.io/v1beta2',
    kind: 'KafkaConnector',
    metadata: { name: def.name, labels: { 'strimzi.io/cluster': CONNECT_CLUSTER } },
    spec: { class: cls, tasksMax: Number(tasks ?? '1'), state: 'running', config },
  };
}

/** The inverse of connectorObject, for the spec that proves the round trip. */
export function connectorDefinitionOf(o: K8sObject): ConnectorDefinition {
  const spec = o.spec as { class: string; tasksMax: number; config: Record<string, string> };
  return {
    name: o.metadata.name,
    config: { 'connector.class': spec.class, 'tasks.max': String(spec.tasksMax), ...spec.config },
  };
}

export { connectorDefinitions };
