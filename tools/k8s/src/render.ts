import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * The small subset of kustomize our overlays use, so `npm test` can render them without the kustomize binary:
 * `resources` (files and directories with a kustomization.yaml), `patches` (strategic merge patches, by the
 * patch's kind + name or by a `target` of kind and name regex), `namespace` and `images`. Any other field of a
 * kustomization.yaml is refused, so an overlay cannot silently use something this renderer would ignore.
 *
 * Strategic merge subset: maps merge recursively, `null` deletes a key, lists whose items all carry a `name`
 * (containers, env, volumes, volumeMounts) merge item by item on `name`, every other list is replaced. This is
 * what kustomize does for those fields; overlays must not patch lists merged on another key (e.g. `ports`).
 */

/** A Kubernetes object as far as the renderer cares. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [key: string]: unknown };
  [key: string]: unknown;
}

interface Target {
  kind?: string;
  name?: string;
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  resources?: string[];
  patches?: { path?: string; patch?: string; target?: Target }[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

const SUPPORTED = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'patches', 'images']);
const TARGET_FIELDS = new Set(['kind', 'name']);
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'PersistentVolume',
  'StorageClass',
  'PriorityClass',
]);
const POD_TEMPLATE_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicaSet']);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const isMap = (v: unknown): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => structuredClone(v);

/** Parses every document of a YAML text; empty documents are skipped, parse errors thrown with the file name. */
export function parseYamlDocuments(text: string, source: string): unknown[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length) throw new Error(`${source}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return doc.toJS() as unknown;
    })
    .filter((d) => d !== null && d !== undefined);
}

/** Strategic merge of `patch` into `base` (the subset documented above); neither argument is modified. */
export function strategicMerge(base: unknown, patch: unknown): unknown {
  if (isMap(base) && isMap(patch)) {
    const out: Record<string, unknown> = clone(base);
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete out[key];
      else out[key] = strategicMerge(out[key], value);
    }
    return out;
  }
  if (Array.isArray(base) && Array.isArray(patch) && patch.length > 0 && [...base, ...patch].every(hasName)) {
    const out = clone(base) as { name: string }[];
    for (const item of patch as { name: string }[]) {
      const at = out.findIndex((b) => b.name === item.name);
      if (at >= 0) out[at] = strategicMerge(out[at], item) as { name: string };
      else out.push(clone(item));
    }
    return out;
  }
  return clone(patch);
}

const hasName = (v: unknown): boolean => isMap(v) && typeof v.name === 'string';

/** Object id as kustomize sees it: kind, namespace and name. */
export const idOf = (o: K8sObject): string => `${o.kind}/${o.metadata.namespace ?? '~'}/${o.metadata.name}`;

function asObject(value: unknown, source: string): K8sObject {
  const o = value as K8sObject;
  if (!isMap(value) || typeof o.kind !== 'string' || typeof o.apiVersion !== 'string' || !o.metadata?.name)
    throw new Error(`${source}: a resource needs apiVersion, kind and metadata.name`);
  return o;
}

function matches(o: K8sObject, target: Target): boolean {
  if (target.kind && o.kind !== target.kind) return false;
  if (target.name && !new RegExp(`^(?:${target.name})$`).test(o.metadata.name)) return false;
  return true;
}

function applyPatch(objects: K8sObject[], patch: unknown, target: Target | undefined, source: string): void {
  if (!isMap(patch)) throw new Error(`${source}: a patch must be a map`);
  if (target) {
    for (const field of Object.keys(target))
      if (!TARGET_FIELDS.has(field)) throw new Error(`${source}: unsupported target field ${field}`);
    const body = clone(patch) as Record<string, unknown> & { metadata?: Record<string, unknown> };
    if (body.metadata) delete body.metadata.name;
    const hits = objects.filter((o) => matches(o, target));
    if (hits.length === 0) throw new Error(`${source}: the patch target matches no resource`);
    for (const o of hits) Object.assign(o, strategicMerge(o, body));
    return;
  }
  const p = asObject(patch, source);
  const hits = objects.filter((o) => o.kind === p.kind && o.metadata.name === p.metadata.name);
  if (hits.length !== 1)
    throw new Error(`${source}: ${p.kind}/${p.metadata.name} matches ${hits.length} resources`);
  Object.assign(hits[0], strategicMerge(hits[0], patch));
}

function podSpecs(o: K8sObject): Record<string, unknown>[] {
  if (!POD_TEMPLATE_KINDS.has(o.kind)) return [];
  const spec = (o.spec as { template?: { spec?: Record<string, unknown> } } | undefined)?.template?.spec;
  return spec ? [spec] : [];
}

function setImages(objects: K8sObject[], images: NonNullable<Kustomization['images']>): void {
  for (const o of objects)
    for (const spec of podSpecs(o))
      for (const list of ['initContainers', 'containers'])
        for (const c of (spec[list] as { image?: string }[] | undefined) ?? []) {
          if (!c.image) continue;
          const [, repo, tag] = /^(.*?)(?::([^:/@]+))?(?:@.*)?$/.exec(c.image) ?? [];
          const rule = images.find((i) => i.name === repo);
          if (rule) c.image = `${rule.newName ?? repo}:${rule.newTag ?? tag ?? 'latest'}`;
        }
}

/** Reads a file of the tree being rendered; replaceable for tests. */
export interface RenderFs {
  read(path: string): string;
  isDirectory(path: string): boolean;
}

export const nodeFs: RenderFs = {
  read: (path) => readFileSync(path, 'utf8'),
  isDirectory: (path) => statSync(path).isDirectory(),
};

/** Renders the kustomization in `dir` (like `kustomize build dir`) into a list of objects. */
export function renderKustomization(dir: string, fs: RenderFs = nodeFs): K8sObject[] {
  const file = join(dir, 'kustomization.yaml');
  const [k] = parseYamlDocuments(fs.read(file), file) as Kustomization[];
  for (const field of Object.keys(k ?? {}))
    if (!SUPPORTED.has(field)) throw new Error(`${file}: unsupported kustomization field ${field}`);

  const objects: K8sObject[] = [];
  for (const entry of k.resources ?? []) {
    const path = join(dir, entry);
    if (fs.isDirectory(path)) objects.push(...renderKustomization(path, fs));
    else objects.push(...parseYamlDocuments(fs.read(path), path).map((d) => asObject(d, path)));
  }

  for (const [i, p] of (k.patches ?? []).entries()) {
    const source = p.path ? join(dir, p.path) : `${file} patches[${i}]`;
    const text = p.path ? fs.read(join(dir, p.path)) : p.patch;
    if (text === undefined) throw new Error(`${source}: a patch needs path or patch`);
    for (const doc of parseYamlDocuments(text, source)) applyPatch(objects, doc, p.target, source);
  }

  if (k.namespace)
    for (const o of objects) if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
  if (k.images) setImages(objects, k.images);

  const seen = new Set<string>();
  for (const o of objects) {
    if (seen.has(idOf(o))) throw new Error(`${file}: ${idOf(o)} is declared twice`);
    seen.add(idOf(o));
  }
  return objects;
}
