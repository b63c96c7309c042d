import { execFileSync, spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';

/** A Kubernetes object as far as the generator and the checks care. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

/** Parses every document of a YAML text; empty documents are skipped, parse errors thrown with the source. */
export function parseYamlDocuments(text: string, source: string): unknown[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return doc.toJS() as unknown;
    })
    .filter((d) => d !== null && d !== undefined);
}

/** Why `kubectl kustomize` cannot run here, or undefined when it can. */
export function kustomizeUnavailable(): string | undefined {
  const probe = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0)
    return `kubectl is not on the PATH (${probe.error?.message ?? probe.stderr.trim()}): install kubectl >= 1.27 to render infra/k8s`;
  return undefined;
}

/** Renders a kustomization directory with the real `kubectl kustomize` into its objects. */
export function kustomize(dir: string): K8sObject[] {
  const text = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return parseYamlDocuments(text, `kubectl kustomize ${dir}`) as K8sObject[];
}
