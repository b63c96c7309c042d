import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { REPO_ROOT } from '@checkout/local-stack';
import { K8sObject, kustomize, kustomizeUnavailable } from './kustomize';
import { STRIMZI_API } from './manifests';

/**
 * Every object both overlays render is checked against its published schema: the Kubernetes OpenAPI schemas
 * (kubernetes-models) and the prometheus-operator CRDs (@kubernetes-models/prometheus-operator). Strimzi
 * publishes no schema package on the npm registry; its objects get the structural checks of manifests.spec.ts.
 */

interface Model {
  validate(): void;
}
type ModelClass = new (data: object) => Model;

/** The model class of each apiVersion/kind the overlays use; an object of another kind fails the spec. */
async function models(): Promise<Map<string, ModelClass>> {
  const core = await import('kubernetes-models/v1');
  const apps = await import('kubernetes-models/apps/v1');
  const batch = await import('kubernetes-models/batch/v1');
  const policy = await import('kubernetes-models/policy/v1');
  const autoscaling = await import('kubernetes-models/autoscaling/v2');
  const networking = await import('kubernetes-models/networking.k8s.io/v1');
  const monitoring = await import('@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1');
  return new Map<string, ModelClass>([
    ['v1/ConfigMap', core.ConfigMap],
    ['v1/Service', core.Service],
    ['apps/v1/Deployment', apps.Deployment],
    ['batch/v1/Job', batch.Job],
    ['policy/v1/PodDisruptionBudget', policy.PodDisruptionBudget],
    ['autoscaling/v2/HorizontalPodAutoscaler', autoscaling.HorizontalPodAutoscaler],
    ['networking.k8s.io/v1/NetworkPolicy', networking.NetworkPolicy],
    ['monitoring.coreos.com/v1/ServiceMonitor', monitoring.ServiceMonitor],
    ['monitoring.coreos.com/v1/PrometheusRule', monitoring.PrometheusRule],
  ] as [string, ModelClass][]);
}

const SKIP = kustomizeUnavailable();

for (const overlay of ['dev', 'prod']) {
  (SKIP ? describe.skip : describe)(`infra/k8s/overlays/${overlay} against the published schemas`, () => {
    it('validates every Kubernetes and prometheus-operator object; nothing else but Strimzi v1 is rendered', async () => {
      const objects: K8sObject[] = kustomize(join(REPO_ROOT, 'infra', 'k8s', 'overlays', overlay));
      const byKind = await models();
      let validated = 0;
      for (const o of objects) {
        const where = `${o.apiVersion} ${o.kind}/${o.metadata.name}`;
        if (o.apiVersion.startsWith('kafka.strimzi.io/')) {
          assert.equal(o.apiVersion, STRIMZI_API, where);
          continue;
        }
        const model = byKind.get(`${o.apiVersion}/${o.kind}`);
        assert.ok(model, `${where}: no schema known for this kind`);
        assert.doesNotThrow(() => new model(o).validate(), where);
        validated += 1;
      }
      assert.ok(validated > 40, `only ${validated} objects validated`);
    });

    it('the validator refuses a broken object (the check can fail)', async () => {
      const byKind = await models();
      const Deployment = byKind.get('apps/v1/Deployment') as ModelClass;
      const broken = {
        metadata: { name: 'x' },
        spec: {
          selector: {},
          template: {
            spec: { containers: [{ name: 'app', image: 'x', ports: [{ containerPort: 'http' }] }] },
          },
        },
      };
      assert.throws(() => new Deployment(broken).validate(), /containerPort/);
    });
  });
}
