import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SAGA_TOPICS, dlqTopic } from '@checkout/contracts';
import {
  ConnectorDefinition,
  REPO_ROOT,
  SERVICES,
  ServiceSpec,
  connectorDefinitions,
  dbEnvPrefix,
} from '@checkout/local-stack';
import { K8sObject } from './kustomize';

/**
 * The Kubernetes base, built from the one list of services (infra/local topology), the connector JSON of
 * infra/debezium and the saga topics of libs/contracts. `generate.ts` writes it to infra/k8s/base; a spec checks
 * the committed files are what this module produces, and another renders the overlays with `kubectl kustomize`
 * and checks the rules.
 */

export const IMAGE_REGISTRY = 'ghcr.io/checkout-saga';
export const IMAGE_TAG = '0.1.0';
/** The Strimzi release the `kafka.strimzi.io/v1` objects are written for, and the Kafka it runs for Connect. */
export const STRIMZI_VERSION = '1.2.0';
export const STRIMZI_API = 'kafka.strimzi.io/v1';
export const MONITORING_API = 'monitoring.coreos.com/v1';
export const KAFKA_CLUSTER = 'checkout-kafka';
export const CONNECT_CLUSTER = 'checkout-connect';
/** The cluster's TLS listener with SCRAM-SHA-512 authentication (the only one the apps and Connect use). */
export const KAFKA_BOOTSTRAP = `${KAFKA_CLUSTER}-kafka-bootstrap:9093`;
/** Strimzi's cluster CA certificate Secret, mounted where KAFKA_SSL_CA_FILE points. */
export const KAFKA_CA_SECRET = `${KAFKA_CLUSTER}-cluster-ca-cert`;
export const KAFKA_CA_DIR = '/etc/kafka-ca';
/** The container that runs the app in every Deployment (overlays patch it by this name). */
export const APP_CONTAINER = 'app';
export const MIGRATE_CONTAINER = 'migrate';
/** Metrics and health listen here, apart from the public PORT: probes and ServiceMonitors target it. */
export const INTERNAL_PORT = 9464;

/** SIGTERM budget of the app (libs/service-kit SHUTDOWN_TIMEOUT_MS): consumers drain, HTTP finishes. */
export const SHUTDOWN_TIMEOUT_MS = 20_000;
/** preStop sleep, so endpoints drop the pod before it stops accepting connections. */
export const PRESTOP_SLEEP_SECONDS = 5;
/** Kubernetes kills after this: preStop + drain + margin. */
export const TERMINATION_GRACE_SECONDS = 45;
/** The V8 old-space cap must leave room for buffers, code and stacks: at most this share of the memory limit. */
export const MAX_HEAP_SHARE = 0.75;
/** Memory limit of every app container in the base, and the heap that fits in it (overlays patch both). */
export const BASE_MEMORY_LIMIT_MI = 512;
export const BASE_HEAP_MB = 352;

/** Partitions of every saga topic (and its DLQ); the key is the order id, so one saga stays in order. */
export const TOPIC_PARTITIONS = 12;
/** Debezium's heartbeat topic prefix (`topic.heartbeat.prefix` of every infra/debezium/*.json). */
export const HEARTBEAT_PREFIX = '__debezium-heartbeat';
/** Connect's own topics, named in `spec` as Strimzi v1 requires. */
export const CONNECT_TOPICS = {
  configStorageTopic: `${CONNECT_CLUSTER}-configs`,
  offsetStorageTopic: `${CONNECT_CLUSTER}-offsets`,
  statusStorageTopic: `${CONNECT_CLUSTER}-status`,
} as const;

/**
 * sha512 of the Debezium PostgreSQL plugin tar.gz per version, checked by Strimzi's build before it uses the
 * artifact. Taken from the file Maven fetched and verified against Central's .sha1 (~/.m2); a spec recomputes it
 * there when the file is present. A Debezium bump without its checksum fails the generator.
 */
export const DEBEZIUM_PLUGIN_SHA512: Record<string, string> = {
  '3.6.1.Final':
    '774f6854a6c1c9a7ad3bdb6ddd367e9479a0b80e511ea27fc361320a955f9bf57a72393ff0e045b868b63589e7e16c27266cda296d9b1419bb071e914ee4d212',
};

/** The saga topics each service consumes (its consumers' subscriptions): it reads them and writes their DLQs. */
export const CONSUMED_TOPICS: Record<ServiceSpec['name'], readonly string[]> = {
  order: [
    'inventory.reserved',
    'inventory.rejected',
    'inventory.released',
    'inventory.committed',
    'inventory.backordered',
    'payment.succeeded',
    'payment.failed',
    'payment.refunded',
    'fulfillment.shipment-created',
    'fulfillment.apology-voucher-issued',
  ],
  inventory: [
    'order.created',
    'order.cancelled',
    'payment.succeeded',
    'payment.failed',
    'fulfillment.shipment-failed',
  ],
  payment: [
    'inventory.reserved',
    'inventory.unavailable-after-payment',
    'order.cancelled',
    'fulfillment.shipment-failed',
  ],
  fulfillment: [
    'order.created',
    'order.paid',
    'payment.failed',
    'payment.refunded',
    'inventory.unavailable-after-payment',
  ],
  'saga-tracker': SAGA_TOPICS,
  'psp-simulator': [],
};
/** The public topic other teams consume, read-only, with the KafkaUser below (docs/consumers.md). */
export const PUBLIC_READER = {
  user: 'order-paid-reader',
  topic: 'order.paid',
  groupPrefix: 'order-paid-',
} as const;

/** Env names holding credentials: they may only come from a secretKeyRef. */
export const SECRET_ENV = [
  'DATABASE_URL',
  'TENANTS',
  'TENANT_PSP_CREDENTIALS',
  'REDIS_URL',
  'REDIS_PASSWORD',
  'KAFKA_SASL_PASSWORD',
  'CDC_DB_USER',
  'CDC_DB_PASSWORD',
] as const;
/** Names that look secret: never a literal value, never a ConfigMap key. */
export const SECRETISH = /(PASSWORD|SECRET|TOKEN|KEY|TENANTS|DATABASE_URL|REDIS_URL|CREDENTIAL|JAAS)/;

export const imageOf = (app: string): string => `${IMAGE_REGISTRY}/${app}`;
export const dbSecretOf = (app: string): string => `${app}-db`;
/** The KafkaUser of an app; Strimzi's User Operator writes its password into a Secret of the same name. */
export const kafkaUserOf = (app: string): string => app;
export const migrateJobOf = (app: string): string => `${app}-migrate`;
export const TENANTS_SECRET = 'checkout-tenants';
export const PSP_CREDENTIALS_SECRET = 'checkout-psp-credentials';
export const REDIS_SECRET = 'checkout-redis';
export const CDC_SECRET = 'checkout-cdc';
export const CONNECT_ENV_CONFIGMAP = 'checkout-connect-env';
/** Label a database pod (or a proxy in front of a managed database) carries for each service it serves. */
export const dbPodLabel = (app: string): string => `db.checkout-saga.dev/${app}`;
export const REDIS_POD_LABELS = { 'app.kubernetes.io/name': 'redis' };
/** Namespace of Prometheus (the ServiceMonitors' scraper): the only one reaching the internal port. */
export const MONITORING_NAMESPACE = 'monitoring';

/** The services whose topics a connector relays: the outbox owner writes them (and its heartbeat topic). */
export const ownTopicsOf = (app: string): string[] => SAGA_TOPICS.filter((t) => t.startsWith(`${app}.`));
export const heartbeatTopicOf = (def: ConnectorDefinition): string =>
  `${def.config['topic.heartbeat.prefix'] ?? HEARTBEAT_PREFIX}.${def.config['topic.prefix']}`;
const connectorOfService = (app: string) => connectorDefinitions().find((d) => d.name === `${app}-outbox`);

const labelsOf = (app: string, component = 'service') => ({
  'app.kubernetes.io/name': app,
  'app.kubernetes.io/part-of': 'checkout-saga',
  'app.kubernetes.io/component': component,
});
const selectorOf = (app: string) => ({ 'app.kubernetes.io/name': app });
const urlOf = (svc: ServiceSpec) => `http://${svc.name}:${svc.defaultPort}`;
const serviceByName = (name: ServiceSpec['name']) => SERVICES.find((s) => s.name === name) as ServiceSpec;
const usesRedis = (svc: ServiceSpec) => svc.name === 'order' || svc.name === 'inventory';

/** Settings of one service that are not secrets: the names `serviceEnv` of the local stack sets, plus auth. */
export function configData(svc: ServiceSpec): Record<string, string> {
  return {
    NODE_ENV: 'production',
    SERVICE_NAME: svc.name,
    PORT: String(svc.defaultPort),
    INTERNAL_PORT: String(INTERNAL_PORT),
    LOG_LEVEL: 'info',
    KAFKA_BROKERS: KAFKA_BOOTSTRAP,
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
    KAFKA_SASL_USERNAME: kafkaUserOf(svc.name),
    KAFKA_SSL: 'true',
    KAFKA_SSL_CA_FILE: `${KAFKA_CA_DIR}/ca.crt`,
    PSP_URL: urlOf(serviceByName('psp-simulator')),
    ORDER_URL: urlOf(serviceByName('order')),
    INVENTORY_URL: urlOf(serviceByName('inventory')),
    PAYMENT_URL: urlOf(serviceByName('payment')),
    FULFILLMENT_URL: urlOf(serviceByName('fulfillment')),
    DEV_SEED: 'false',
    SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    NODE_OPTIONS: `--max-old-space-size=${BASE_HEAP_MB}`,
  };
}

const secretEnv = (name: string, secret: string, key = name) => ({
  name,
  valueFrom: { secretKeyRef: { name: secret, key } },
});

/** Env of the app (and of its migration Job): everything secret comes from a Secret. */
export function secretEnvOf(svc: ServiceSpec) {
  const env = [];
  if (svc.database) env.push(secretEnv('DATABASE_URL', dbSecretOf(svc.name)));
  // The hot-SKU gate: order asks it at checkout, inventory re-syncs it from the database.
  if (usesRedis(svc)) {
    env.push(secretEnv('REDIS_URL', REDIS_SECRET));
    env.push(secretEnv('REDIS_PASSWORD', REDIS_SECRET));
  }
  env.push(secretEnv('KAFKA_SASL_PASSWORD', kafkaUserOf(svc.name), 'password'));
  // Tenants (ids and API key hashes) as a JSON array: libs/service-kit tenancy.ts.
  env.push(secretEnv('TENANTS', TENANTS_SECRET));
  // PSP secret keys and webhook secrets: only the payment service and the PSP (simulator) hold them.
  if (svc.name === 'payment' || svc.name === 'psp-simulator')
    env.push(secretEnv('TENANT_PSP_CREDENTIALS', PSP_CREDENTIALS_SECRET));
  return env;
}

const containerSecurity = {
  runAsNonRoot: true,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};

const podSecurity = {
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  fsGroup: 1000,
  seccompProfile: { type: 'RuntimeDefault' },
};

const resources = {
  requests: { cpu: '100m', memory: '192Mi' },
  limits: { cpu: '1', memory: `${BASE_MEMORY_LIMIT_MI}Mi` },
};

const volumes = [
  { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
  { name: 'kafka-ca', secret: { secretName: KAFKA_CA_SECRET, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
];
const volumeMounts = [
  { name: 'tmp', mountPath: '/tmp' },
  { name: 'kafka-ca', mountPath: KAFKA_CA_DIR, readOnly: true },
];

/** Readiness: `/health/ready` (what the app's endpoints need, decided in libs/service-kit), on the internal port. */
const readiness = {
  httpGet: { path: '/health/ready', port: 'internal' },
  periodSeconds: 5,
  timeoutSeconds: 3,
  failureThreshold: 3,
};

function deployment(svc: ServiceSpec): K8sObject {
  const env = secretEnvOf(svc);
  const envFrom = [{ configMapRef: { name: `${svc.name}-config` } }];
  const image = `${imageOf(svc.name)}:${IMAGE_TAG}`;
  const httpGet = (path: string) => ({ httpGet: { path, port: 'internal' } });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: svc.name, labels: labelsOf(svc.name) },
    spec: {
      revisionHistoryLimit: 5,
      selector: { matchLabels: selectorOf(svc.name) },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: labelsOf(svc.name) },
        spec: {
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
          securityContext: podSecurity,
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'ScheduleAnyway',
              labelSelector: { matchLabels: selectorOf(svc.name) },
            },
          ],
          containers: [
            {
              name: APP_CONTAINER,
              image,
              imagePullPolicy: 'IfNotPresent',
              ports: [
                { name: 'http', containerPort: svc.defaultPort },
                { name: 'internal', containerPort: INTERNAL_PORT },
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
              readinessProbe: readiness,
              lifecycle: { preStop: { exec: { command: ['sleep', String(PRESTOP_SLEEP_SECONDS)] } } },
              securityContext: containerSecurity,
              volumeMounts,
            },
          ],
          volumes,
        },
      },
    },
  };
}

/**
 * The service's migrations as a Job, run once per release instead of on every pod start: an Argo CD PreSync
 * hook (replaced on each sync), or with plain kubectl applied and awaited before the Deployment (README).
 */
function migrationJob(svc: ServiceSpec): K8sObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: migrateJobOf(svc.name),
      labels: labelsOf(svc.name, 'migrate'),
      annotations: {
        'argocd.argoproj.io/hook': 'PreSync',
        'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
      },
    },
    spec: {
      backoffLimit: 3,
      activeDeadlineSeconds: 600,
      ttlSecondsAfterFinished: 86_400,
      template: {
        metadata: { labels: labelsOf(svc.name, 'migrate') },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          securityContext: podSecurity,
          containers: [
            {
              name: MIGRATE_CONTAINER,
              image: `${imageOf(svc.name)}:${IMAGE_TAG}`,
              imagePullPolicy: 'IfNotPresent',
              // tini stays PID 1 (the image's ENTRYPOINT); only the command changes.
              args: ['node', 'dist/src/migrate.js'],
              envFrom: [{ configMapRef: { name: `${svc.name}-config` } }],
              env: secretEnvOf(svc),
              resources,
              securityContext: containerSecurity,
              volumeMounts,
            },
          ],
          volumes,
        },
      },
    },
  };
}

const DNS_EGRESS = {
  to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
  ports: [
    { protocol: 'UDP', port: 53 },
    { protocol: 'TCP', port: 53 },
  ],
};
const KAFKA_EGRESS = {
  to: [{ podSelector: { matchLabels: { 'strimzi.io/cluster': KAFKA_CLUSTER, 'strimzi.io/kind': 'Kafka' } } }],
  ports: [{ protocol: 'TCP', port: 9093 }],
};
const appEgress = (name: ServiceSpec['name']) => {
  const app = serviceByName(name);
  return {
    to: [{ podSelector: { matchLabels: selectorOf(app.name) } }],
    ports: [{ protocol: 'TCP', port: app.defaultPort }],
  };
};

/** What each app may reach: DNS, its own database, Kafka, Redis where used, the PSP for payment. */
export function egressOf(svc: ServiceSpec): unknown[] {
  const rules: unknown[] = [DNS_EGRESS, KAFKA_EGRESS];
  if (svc.database) rules.push(dbEgress(svc));
  if (usesRedis(svc))
    rules.push({
      to: [{ namespaceSelector: {}, podSelector: { matchLabels: REDIS_POD_LABELS } }],
      ports: [{ protocol: 'TCP', port: 6379 }],
    });
  if (svc.name === 'payment') {
    // The real PSP is outside the cluster (HTTPS); the dev overlay's simulator is a pod of the namespace.
    rules.push({
      to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'] } }],
      ports: [{ protocol: 'TCP', port: 443 }],
    });
    rules.push(appEgress('psp-simulator'));
  }
  // The simulator delivers its signed webhooks to payment.
  if (svc.name === 'psp-simulator') rules.push(appEgress('payment'));
  return rules;
}

const dbEgress = (svc: ServiceSpec) => ({
  to: [{ namespaceSelector: {}, podSelector: { matchLabels: { [dbPodLabel(svc.name)]: 'true' } } }],
  ports: [{ protocol: 'TCP', port: 5432 }],
});

/** Each app's pods: public port from anywhere, internal port (metrics, probes) from monitoring; egress above. */
function networkPolicy(svc: ServiceSpec): K8sObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: svc.name, labels: labelsOf(svc.name) },
    spec: {
      podSelector: { matchLabels: { ...selectorOf(svc.name), 'app.kubernetes.io/component': 'service' } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        { ports: [{ protocol: 'TCP', port: svc.defaultPort }] },
        {
          from: [
            { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': MONITORING_NAMESPACE } } },
          ],
          ports: [{ protocol: 'TCP', port: INTERNAL_PORT }],
        },
      ],
      egress: egressOf(svc),
    },
  };
}

/** A migration Job's pods: no ingress, DNS and the app's database only. */
function migrationNetworkPolicy(svc: ServiceSpec): K8sObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: migrateJobOf(svc.name), labels: labelsOf(svc.name, 'migrate') },
    spec: {
      podSelector: { matchLabels: { ...selectorOf(svc.name), 'app.kubernetes.io/component': 'migrate' } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [DNS_EGRESS, dbEgress(svc)],
    },
  };
}

/** Prometheus scrapes the internal port of every pod of the app. */
function serviceMonitor(svc: ServiceSpec): K8sObject {
  return {
    apiVersion: MONITORING_API,
    kind: 'ServiceMonitor',
    metadata: { name: svc.name, labels: labelsOf(svc.name) },
    spec: {
      selector: { matchLabels: selectorOf(svc.name) },
      endpoints: [{ port: 'internal', path: '/metrics', interval: '30s' }],
    },
  };
}

interface Alert {
  alert: string;
  expr: string;
  for?: string;
  severity: 'page' | 'ticket';
  summary: string;
}

/** The runbook's alerts (docs/runbook.md "Metrics and the alerts they carry") that apply to one app. */
export function alertsOf(svc: ServiceSpec): Alert[] {
  const s = `service="${svc.name}"`;
  const alerts: Alert[] = [
    {
      alert: 'CheckoutTargetDown',
      expr: `up{service="${svc.name}"} == 0`,
      for: '5m',
      severity: 'page',
      summary: `${svc.name}: a pod has not answered /metrics for 5 minutes`,
    },
  ];
  if (CONSUMED_TOPICS[svc.name].length)
    alerts.push(
      {
        alert: 'CheckoutConsumerLagGrowing',
        expr: `min_over_time(deriv(messaging_consumer_lag{${s}}[5m])[5m:1m]) > 0`,
        for: '5m',
        severity: 'page',
        summary: `${svc.name}: consumer {{ $labels.consumer }} falls behind on {{ $labels.topic }}`,
      },
      {
        alert: 'CheckoutDlqMessages',
        expr: `max by (topic) (messaging_dlq_messages{${s}}) > 0`,
        severity: 'ticket',
        summary: 'messages parked on {{ $labels.topic }}: see runbook "Messages on a DLQ"',
      },
      {
        alert: 'CheckoutConsumerParking',
        expr: `sum by (consumer, type) (rate(messaging_consumed_total{${s},outcome="dlq"}[5m])) > 0`,
        severity: 'ticket',
        summary: `${svc.name}: {{ $labels.consumer }} parks {{ $labels.type }} events on the DLQ`,
      },
    );
  if (svc.outbox)
    alerts.push(
      {
        alert: 'CheckoutOutboxRelayStuck',
        expr: `max(outbox_oldest_unconfirmed_age_seconds{${s}}) > 60`,
        severity: 'page',
        summary: `${svc.name}: the outbox relay (Debezium) has confirmed nothing for over 60 s`,
      },
      {
        alert: 'CheckoutOutboxSlotMissing',
        expr: `min(outbox_relay_slot_present{${s}}) == 0`,
        severity: 'page',
        summary: `${svc.name}: no replication slot relays this outbox`,
      },
    );
  const specific: Partial<Record<ServiceSpec['name'], Alert[]>> = {
    order: [
      {
        alert: 'CheckoutStockGateUnavailable',
        expr: `sum(rate(order_stock_gate_unavailable_total{${s}}[5m])) > 0`,
        severity: 'ticket',
        summary: 'the Redis stock gate is down: checkouts take the database path',
      },
      {
        alert: 'CheckoutStockGateUnknownTakes',
        expr: `sum(rate(order_stock_gate_unknown_takes_total{${s}}[5m])) > 0`,
        severity: 'ticket',
        summary: 'gate replies that never came (503 GATE_TIMEOUT)',
      },
    ],
    inventory: [
      {
        alert: 'CheckoutUnavailableAfterPayment',
        expr: `sum(increase(inventory_reservation_outcomes_total{${s},outcome="unavailable_after_payment"}[10m])) > 0`,
        severity: 'page',
        summary: 'paid orders without stock: refunds follow',
      },
      {
        alert: 'CheckoutReservationsOverdue',
        expr: `max(inventory_reservations_overdue_held{${s}}) > 0`,
        for: '2m',
        severity: 'page',
        summary: 'held reservations past expires_at: the expiry job is dead',
      },
      {
        alert: 'CheckoutStockDriftRepaired',
        expr: `sum(rate(inventory_stock_drift_repaired_total{${s}}[10m])) > 0`,
        severity: 'ticket',
        summary: 'reserved stock disagreed with the reservation rows: find the writer',
      },
    ],
    payment: [
      {
        alert: 'CheckoutPaymentAttemptsStuck',
        expr: `max(payment_stuck_oldest_seconds{${s}}) > 600`,
        severity: 'page',
        summary: 'a payment attempt has been created/pending/unknown for over 10 minutes',
      },
      {
        alert: 'CheckoutRefundsFailed',
        expr: `max(payment_refunds_failed{${s}}) > 0`,
        severity: 'page',
        summary: 'refunds parked as refund_failed wait for an operator',
      },
      {
        alert: 'CheckoutPspBreakerOpen',
        expr: `max by (account) (payment_psp_breaker_open{${s}}) == 1`,
        for: '2m',
        severity: 'page',
        summary: 'the PSP circuit breaker of {{ $labels.account }} is open',
      },
      {
        alert: 'CheckoutOrphanCharges',
        expr: `sum(rate(payment_orphan_charges_total{${s}}[5m])) > 0`,
        severity: 'page',
        summary: 'captured charges with no succeeded attempt of ours',
      },
    ],
    'saga-tracker': [
      {
        alert: 'CheckoutSagasStuck',
        expr: `sum by (tenant, waiting_for) (saga_stuck_sagas{${s}}) > 0`,
        for: '5m',
        severity: 'page',
        summary: 'sagas of {{ $labels.tenant }} stuck waiting for {{ $labels.waiting_for }}',
      },
    ],
  };
  return [...alerts, ...(specific[svc.name] ?? [])];
}

function prometheusRule(svc: ServiceSpec): K8sObject {
  return {
    apiVersion: MONITORING_API,
    kind: 'PrometheusRule',
    metadata: { name: svc.name, labels: labelsOf(svc.name) },
    spec: {
      groups: [
        {
          name: `checkout-saga.${svc.name}`,
          rules: alertsOf(svc).map((a) => ({
            alert: a.alert,
            expr: a.expr,
            ...(a.for ? { for: a.for } : {}),
            labels: { severity: a.severity, service: svc.name },
            annotations: {
              summary: a.summary,
              runbook_url: 'docs/runbook.md#metrics-and-the-alerts-they-carry',
            },
          })),
        },
      ],
    },
  };
}

type AclOperation = 'Read' | 'Write' | 'Describe' | 'Create' | 'DescribeConfigs';
interface Acl {
  resource: { type: 'topic' | 'group' | 'cluster'; name?: string; patternType?: 'literal' | 'prefix' };
  operations: AclOperation[];
}
const topicAcl = (name: string, operations: AclOperation[]): Acl => ({
  resource: { type: 'topic', name, patternType: 'literal' },
  operations,
});
const groupAcl = (prefix: string): Acl => ({
  resource: { type: 'group', name: prefix, patternType: 'prefix' },
  operations: ['Read', 'Describe'],
});

/**
 * The topics an app's Kafka identity writes: its own events and its heartbeat topic (its connector produces
 * them with the app's credentials, see connectorObject) and the DLQ of every topic it consumes.
 */
export function writtenTopicsOf(svc: ServiceSpec): string[] {
  const def = connectorOfService(svc.name);
  const own = svc.outbox && def ? [...ownTopicsOf(svc.name), heartbeatTopicOf(def)] : [];
  return [...own, ...CONSUMED_TOPICS[svc.name].map(dlqTopic)];
}

function kafkaUser(name: string, acls: Acl[], component: string): K8sObject {
  return {
    apiVersion: STRIMZI_API,
    kind: 'KafkaUser',
    metadata: {
      name,
      labels: { 'strimzi.io/cluster': KAFKA_CLUSTER, ...labelsOf(name, component) },
    },
    spec: { authentication: { type: 'scram-sha-512' }, authorization: { type: 'simple', acls } },
  };
}

/** One KafkaUser per app: writes only its topics, reads what it consumes, joins only its own groups. */
export function kafkaUserObject(svc: ServiceSpec): K8sObject {
  const acls: Acl[] = [
    ...writtenTopicsOf(svc).map((t) => topicAcl(t, ['Write', 'Describe'])),
    ...CONSUMED_TOPICS[svc.name].map((t) => topicAcl(t, ['Read', 'Describe'])),
    groupAcl(`${svc.name}`),
  ];
  return kafkaUser(kafkaUserOf(svc.name), acls, 'service');
}

/** The read-only identity other teams' `order.paid` consumers get (docs/consumers.md). */
export function publicReaderObject(): K8sObject {
  return kafkaUser(
    PUBLIC_READER.user,
    [topicAcl(PUBLIC_READER.topic, ['Read', 'Describe']), groupAcl(PUBLIC_READER.groupPrefix)],
    'consumer',
  );
}

/** The Connect workers' own identity: their internal topics and group; connectors produce as their app. */
export function connectUserObject(): K8sObject {
  const acls: Acl[] = [
    ...Object.values(CONNECT_TOPICS).map((t) =>
      topicAcl(t, ['Read', 'Write', 'Describe', 'Create', 'DescribeConfigs']),
    ),
    {
      resource: { type: 'group', name: CONNECT_CLUSTER, patternType: 'literal' },
      operations: ['Read', 'Describe'],
    },
    { resource: { type: 'cluster' }, operations: ['Describe', 'DescribeConfigs'] },
  ];
  return kafkaUser(CONNECT_CLUSTER, acls, 'cdc');
}

/** The objects of one app: ConfigMap, Deployment, Service, PDB, HPA, migration Job, NetworkPolicies, monitoring. */
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
        ports: [
          { name: 'http', port: svc.defaultPort, targetPort: 'http' },
          { name: 'internal', port: INTERNAL_PORT, targetPort: 'internal' },
        ],
      },
    },
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: svc.name, labels: labelsOf(svc.name) },
      spec: { maxUnavailable: 1, selector: { matchLabels: selectorOf(svc.name) } },
    },
    networkPolicy(svc),
    kafkaUserObject(svc),
    serviceMonitor(svc),
    prometheusRule(svc),
  ];
  if (svc.database) objects.push(migrationJob(svc), migrationNetworkPolicy(svc));
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

const topicObject = (name: string, retentionMs: number, partitions = TOPIC_PARTITIONS): K8sObject => ({
  apiVersion: STRIMZI_API,
  kind: 'KafkaTopic',
  metadata: {
    // Kubernetes names allow no underscore: the heartbeat topics get a cleaned name, the topic keeps its own.
    name: name.replace(/^_+/, '').replace(/_/g, '-'),
    labels: { 'strimzi.io/cluster': KAFKA_CLUSTER, 'app.kubernetes.io/part-of': 'checkout-saga' },
  },
  spec: {
    topicName: name,
    partitions,
    replicas: 3,
    config: { 'cleanup.policy': 'delete', 'min.insync.replicas': 2, 'retention.ms': retentionMs },
  },
});

/** Every saga topic and its DLQ twin, and each connector's heartbeat topic, as Strimzi KafkaTopics. */
export function topicObjects(): K8sObject[] {
  const day = 24 * 3600_000;
  const saga = SAGA_TOPICS.flatMap((t) => [topicObject(t, 7 * day), topicObject(dlqTopic(t), 30 * day)]);
  for (const t of saga)
    (t.metadata as { annotations?: object }).annotations = {
      'checkout-saga.dev/key': 'orderId (= sagaId): one saga stays on one partition',
    };
  const heartbeats = connectorDefinitions().map((d) => topicObject(heartbeatTopicOf(d), day, 1));
  return [...saga, ...heartbeats];
}

/** Every topic name compose and the local stack create: saga topics, their DLQs, the heartbeat topics. */
export function topicNames(): string[] {
  return topicObjects().map((t) => (t.spec as { topicName: string }).topicName);
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

/** Env of the Connect worker holding a connector's producer credentials (its app's KafkaUser JAAS line). */
export const connectorJaasEnv = (def: ConnectorDefinition): string =>
  `${dbEnvPrefix(def.name.replace(/-outbox$/, ''))}_KAFKA_JAAS`;

/** The Connect env of the placeholders: hosts and names from a ConfigMap, credentials from a Secret. */
function connectEnvVars(defs: ConnectorDefinition[]) {
  const names = [...new Set(defs.flatMap(placeholdersOf))].sort();
  const fromPlaceholders = names.map((name) =>
    SECRETISH.test(name) || name.startsWith('CDC_DB_')
      ? secretEnv(name, CDC_SECRET)
      : { name, valueFrom: { configMapKeyRef: { name: CONNECT_ENV_CONFIGMAP, key: name } } },
  );
  const jaas = defs.map((d) =>
    secretEnv(connectorJaasEnv(d), kafkaUserOf(d.name.replace(/-outbox$/, '')), 'sasl.jaas.config'),
  );
  return [...fromPlaceholders, ...jaas];
}

/** Where each service database lives, for the Connect worker (overlays patch the hosts). */
export function connectEnvConfigMap(defs: ConnectorDefinition[]): K8sObject {
  const data: Record<string, string> = {};
  for (const name of defs.flatMap(placeholdersOf)) {
    if (name.startsWith('CDC_DB_') || SECRETISH.test(name)) continue;
    const svc = SERVICES.find((s) => name.startsWith(`${dbEnvPrefix(s.name)}_`));
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

/** The Kafka Connect cluster (Strimzi v1) with the Debezium PostgreSQL plugin and the env config provider. */
export function connectObject(defs: ConnectorDefinition[]): K8sObject {
  const { kafka, debezium } = stackVersions();
  const sha512sum = DEBEZIUM_PLUGIN_SHA512[debezium];
  if (!sha512sum) throw new Error(`no sha512 of the Debezium ${debezium} plugin in DEBEZIUM_PLUGIN_SHA512`);
  const plugin = `https://repo1.maven.org/maven2/io/debezium/debezium-connector-postgres/${debezium}/debezium-connector-postgres-${debezium}-plugin.tar.gz`;
  return {
    apiVersion: STRIMZI_API,
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
      groupId: CONNECT_CLUSTER,
      ...CONNECT_TOPICS,
      tls: { trustedCertificates: [{ secretName: KAFKA_CA_SECRET, certificate: 'ca.crt' }] },
      authentication: {
        type: 'scram-sha-512',
        username: CONNECT_CLUSTER,
        passwordSecret: { secretName: kafkaUserOf(CONNECT_CLUSTER), password: 'password' },
      },
      config: {
        'config.storage.replication.factor': -1,
        'offset.storage.replication.factor': -1,
        'status.storage.replication.factor': -1,
        'offset.flush.interval.ms': 1000,
        // The worker's config, offset and status consumers hold an empty fetch 10 s (not 0.5 s): an idle worker
        // stops sending the broker six fetches a second; a new record still answers at once.
        'fetch.max.wait.ms': 10000,
        // The worker's group client and its heartbeat thread wake every retry.backoff.ms at rest (100 ms by
        // default); heartbeats still go every 3 s, and a failed request is retried after 1 s.
        'retry.backoff.ms': 1000,
        'scheduled.rebalance.max.delay.ms': 0,
        'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
        'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
        'config.providers': 'env',
        'config.providers.env.class': 'org.apache.kafka.common.config.provider.EnvVarConfigProvider',
        // Lets each connector produce with its own app's credentials (producer.override.sasl.jaas.config).
        'connector.client.config.override.policy': 'Principal',
      },
      build: {
        output: {
          type: 'docker',
          image: `${IMAGE_REGISTRY}/connect-debezium:${debezium}`,
          pushSecret: 'checkout-registry',
        },
        plugins: [
          { name: 'debezium-connector-postgres', artifacts: [{ type: 'tgz', url: plugin, sha512sum }] },
        ],
      },
      resources: { requests: { cpu: '250m', memory: '768Mi' }, limits: { cpu: '1', memory: '1Gi' } },
      jvmOptions: { '-Xms': '256m', '-Xmx': '512m' },
      template: { connectContainer: { env: connectEnvVars(defs) } },
    },
  };
}

/** Config a KafkaConnector sets over its infra/debezium JSON. */
export const connectorOverridesOf = (def: ConnectorDefinition): Record<string, string> => ({
  // The producer authenticates as the app.
  'producer.override.sasl.jaas.config': `\${env:${connectorJaasEnv(def)}}`,
  // Strimzi builds this worker's image from published plugin artifacts, so it runs without the Connect agent
  // (infra/connect-agent, not published anywhere) and Debezium spins ~1 ms at the end of each quiet poll: 0.5% of a
  // core per connector at 200 ms, 2% at the 50 ms of the JSON. Each outbox hop waits up to 200 ms here instead.
  'poll.interval.ms': '200',
});

/** One infra/debezium/*.json as a Strimzi KafkaConnector: class and tasks.max move to spec, the rest is config. */
export function connectorObject(def: ConnectorDefinition): K8sObject {
  const { 'connector.class': cls, 'tasks.max': tasks, ...config } = def.config;
  if (!cls) throw new Error(`${def.name}: connector.class is missing`);
  return {
    apiVersion: STRIMZI_API,
    kind: 'KafkaConnector',
    metadata: { name: def.name, labels: { 'strimzi.io/cluster': CONNECT_CLUSTER } },
    spec: {
      class: cls,
      tasksMax: Number(tasks ?? '1'),
      state: 'running',
      config: { ...config, ...connectorOverridesOf(def) },
    },
  };
}

/** The inverse of connectorObject, for the spec that proves the round trip. */
export function connectorDefinitionOf(o: K8sObject): ConnectorDefinition {
  const spec = o.spec as { class: string; tasksMax: number; config: Record<string, string> };
  const config = { ...spec.config };
  for (const key of Object.keys(connectorOverridesOf({ name: o.metadata.name, config: {} })))
    delete config[key];
  return {
    name: o.metadata.name,
    config: { 'connector.class': spec.class, 'tasks.max': String(spec.tasksMax), ...config },
  };
}

export { connectorDefinitions };
