import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { RenderFs, renderKustomization, strategicMerge } from './render';

/** An in-memory tree for the renderer: path -> text; a path with children is a directory. */
function memoryFs(files: Record<string, string>): RenderFs {
  return {
    read: (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT ${path}`);
      return text;
    },
    isDirectory: (path) => Object.keys(files).some((f) => f.startsWith(`${path}/`)),
  };
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: order
spec:
  template:
    spec:
      initContainers:
        - name: migrate
          image: ghcr.io/x/order:1.0.0
      containers:
        - name: app
          image: ghcr.io/x/order:1.0.0
          args: [a, b]
          env:
            - name: A
              value: '1'
            - name: B
              value: '2'
          resources:
            limits: { cpu: '1', memory: 512Mi }
`;

describe('strategicMerge (the kustomize subset the overlays use)', () => {
  it('merges maps recursively and deletes keys patched with null', () => {
    assert.deepEqual(strategicMerge({ a: { b: 1, c: 2 }, d: 3 }, { a: { b: 9 }, d: null }), {
      a: { b: 9, c: 2 },
    });
  });

  it('merges lists of named items by name, appending new names, and replaces other lists', () => {
    const base = {
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '2' },
      ],
      args: ['x', 'y'],
    };
    const merged = strategicMerge(base, {
      env: [
        { name: 'B', value: '3' },
        { name: 'C', value: '4' },
      ],
      args: ['z'],
    });
    assert.deepEqual(merged, {
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '3' },
        { name: 'C', value: '4' },
      ],
      args: ['z'],
    });
  });

  it('does not modify its arguments', () => {
    const base = { a: { b: [{ name: 'x', v: 1 }] } };
    const copy = structuredClone(base);
    strategicMerge(base, { a: { b: [{ name: 'x', v: 2 }] } });
    assert.deepEqual(base, copy);
  });
});

describe('renderKustomization', () => {
  const root = '/k';
  const files = {
    [join(root, 'base/kustomization.yaml')]: 'resources: [app]\n',
    [join(root, 'base/app/kustomization.yaml')]: 'resources: [deployment.yaml, service.yaml]\n',
    [join(root, 'base/app/deployment.yaml')]: deployment,
    [join(root, 'base/app/service.yaml')]:
      '---\napiVersion: v1\nkind: Service\nmetadata: { name: order }\nspec: { ports: [{ port: 80 }] }\n---\n',
  };

  it('renders nested resources and sets the namespace of every object', () => {
    const fs = memoryFs({
      ...files,
      [join(root, 'ov/kustomization.yaml')]: 'namespace: shop\nresources: [../base]\n',
    });
    const out = renderKustomization(join(root, 'ov'), fs);
    assert.deepEqual(
      out.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`),
      ['Deployment/shop/order', 'Service/shop/order'],
    );
  });

  it('applies a patch by name and a patch by target to every match, and retags images', () => {
    const fs = memoryFs({
      ...files,
      [join(root, 'ov/kustomization.yaml')]: `resources: [../base]
patches:
  - path: by-name.yaml
  - target: { kind: Deployment }
    patch: |
      apiVersion: apps/v1
      kind: Deployment
      metadata: { name: ignored }
      spec: { template: { spec: { containers: [{ name: app, resources: { limits: { memory: 1Gi } } }] } } }
images:
  - name: ghcr.io/x/order
    newTag: '2.0.0'
`,
      [join(root, 'ov/by-name.yaml')]: `apiVersion: apps/v1
kind: Deployment
metadata: { name: order }
spec:
  template:
    spec:
      containers:
        - name: app
          env: [{ name: B, value: '3' }]
`,
    });
    const [d] = renderKustomization(join(root, 'ov'), fs);
    const spec = (d.spec as { template: { spec: Record<string, { name: string; [k: string]: unknown }[]> } })
      .template.spec;
    const app = spec.containers[0];
    assert.equal(d.metadata.name, 'order');
    assert.deepEqual(app.env, [
      { name: 'A', value: '1' },
      { name: 'B', value: '3' },
    ]);
    assert.deepEqual(app.resources, { limits: { cpu: '1', memory: '1Gi' } });
    assert.deepEqual(app.args, ['a', 'b']);
    assert.equal(app.image, 'ghcr.io/x/order:2.0.0');
    assert.equal(spec.initContainers[0].image, 'ghcr.io/x/order:2.0.0');
  });

  it('refuses fields it does not implement, patches that match nothing, and duplicates', () => {
    const withOverlay = (k: string, extra: Record<string, string> = {}) =>
      memoryFs({ ...files, [join(root, 'ov/kustomization.yaml')]: k, ...extra });
    assert.throws(
      () => renderKustomization(join(root, 'ov'), withOverlay('resources: [../base]\nnamePrefix: x-\n')),
      /unsupported kustomization field namePrefix/,
    );
    assert.throws(
      () =>
        renderKustomization(
          join(root, 'ov'),
          withOverlay('resources: [../base]\npatches:\n  - target: { kind: Job }\n    patch: "spec: {}"\n'),
        ),
      /matches no resource/,
    );
    assert.throws(
      () =>
        renderKustomization(
          join(root, 'ov'),
          withOverlay(
            'resources: [../base]\npatches:\n  - patch: "{ apiVersion: v1, kind: Service, metadata: { name: nope } }"\n',
          ),
        ),
      /Service\/nope matches 0 resources/,
    );
    assert.throws(
      () => renderKustomization(join(root, 'ov'), withOverlay('resources: [../base, ../base/app]\n')),
      /declared twice/,
    );
    assert.throws(
      () =>
        renderKustomization(
          join(root, 'ov'),
          withOverlay(
            'resources: [../base]\npatches:\n  - target: { labelSelector: a=b }\n    patch: "spec: {}"\n',
          ),
        ),
      /unsupported target field labelSelector/,
    );
  });
});
