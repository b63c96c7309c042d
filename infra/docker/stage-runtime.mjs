#!/usr/bin/env node
// Copies what one app's runtime image holds into <out>: the root package.json and lockfile, and for the app and
// every @checkout/* workspace it depends on (transitively, from the package.json files) its package.json and its
// compiled dist/ without tests. Nothing else: no libs/testing, no tools, no sources. The Dockerfile's build stage
// runs it, and tools/k8s's image spec runs it the same way into a scratch folder.
// Usage: node infra/docker/stage-runtime.mjs <app> <out>
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

const [app, outArg] = process.argv.slice(2);
if (!app || !outArg) {
  console.error('usage: stage-runtime.mjs <app> <out>');
  process.exit(2);
}
const root = resolve(import.meta.dirname, '..', '..');
const out = resolve(outArg);
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

/** Workspace folder of every @checkout/* package, from the root's workspace globs (one level: libs/*, apps/*). */
const folders = new Map();
for (const pattern of readJson(join(root, 'package.json')).workspaces) {
  const dirs = pattern.endsWith('/*')
    ? readdirSync(join(root, pattern.slice(0, -2))).map((d) => join(pattern.slice(0, -2), d))
    : [pattern];
  for (const dir of dirs) {
    const file = join(root, dir, 'package.json');
    if (existsSync(file)) folders.set(readJson(file).name, dir);
  }
}

const wanted = [];
const visit = (dir) => {
  if (wanted.includes(dir)) return;
  wanted.push(dir);
  for (const dep of Object.keys(readJson(join(root, dir, 'package.json')).dependencies ?? {})) {
    if (!dep.startsWith('@checkout/')) continue;
    const depDir = folders.get(dep);
    if (!depDir) throw new Error(`${dir}: ${dep} is not a workspace`);
    visit(depDir);
  }
};
const appDir = join('apps', app);
if (!existsSync(join(root, appDir, 'package.json'))) throw new Error(`no app ${app}`);
visit(appDir);

const isTest = (path) =>
  path.split(sep).includes('test') || /\.(int-)?spec\.js(\.map)?$|\.spec\.d\.ts$|\.tsbuildinfo$/.test(path);
mkdirSync(out, { recursive: true });
for (const file of ['package.json', 'package-lock.json']) cpSync(join(root, file), join(out, file));
for (const dir of wanted) {
  const dist = join(root, dir, 'dist');
  if (!existsSync(dist)) throw new Error(`${dir}/dist is missing: build first (npx tsc -b)`);
  cpSync(join(root, dir, 'package.json'), join(out, dir, 'package.json'));
  cpSync(dist, join(out, dir, 'dist'), {
    recursive: true,
    filter: (src) => !isTest(relative(dist, src)),
  });
}
console.log(`staged ${app}: ${wanted.join(', ')}`);
