#!/usr/bin/env node
// Runs the compiled test files with node's test runner. Unit specs (*.spec.js) need nothing; integration
// specs (*.int-spec.js) run one file at a time against the real local stack, which this script starts
// (and stops again if it started it). Usage: run-tests.mjs [--unit] [--project <dir>] [file filter...]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const projectArg = args.includes('--project') ? args[args.indexOf('--project') + 1] : undefined;
const filters = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--project');

const projects = projectArg
  ? [projectArg]
  : ['libs', 'apps', 'tools', 'infra', 'tests'].flatMap((group) =>
      existsSync(join(root, group)) ? readdirSync(join(root, group)).map((p) => join(group, p)) : [],
    );

function walk(dir, out) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}

const files = projects.flatMap((p) => walk(join(root, p, 'dist'), []));
const pick = (suffix) =>
  files
    .filter((f) => f.endsWith(suffix))
    .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
    .sort();
const unit = pick('.spec.js').filter((f) => !f.endsWith('.int-spec.js'));
const integration = unitOnly ? [] : pick('.int-spec.js');
if (unit.length + integration.length === 0) {
  console.log('no test files found (did the build run?)');
  process.exit(filters.length ? 1 : 0);
}

const stackCli = join(root, 'infra', 'local', 'dist', 'src', 'cli.js');
let startedStack = false;
if (integration.length) {
  const wasUp = existsSync(join(root, '.stack', 'run', 'kafka.pid')) && process.env.CI !== 'true';
  const up = spawnSync(process.execPath, [stackCli, 'up'], { stdio: 'inherit' });
  if (up.status !== 0) {
    console.error('the local stack did not come up; see .stack/logs/');
    process.exit(1);
  }
  startedStack = !wasUp && process.env.STACK_KEEP !== 'true';
}

const test = spawnSync(
  process.execPath,
  ['--enable-source-maps', '--test', '--test-concurrency=1', '--test-reporter=spec', ...unit, ...integration],
  { stdio: 'inherit', cwd: root, env: { ...process.env, FORCE_COLOR: '0' } },
);
if (startedStack) spawnSync(process.execPath, [stackCli, 'down'], { stdio: 'inherit' });
console.log(
  `ran ${unit.length} unit and ${integration.length} integration files: ${[...unit, ...integration].map((f) => relative(root, f)).join(', ')}`.slice(
    0,
    4000,
  ),
);
process.exit(test.status ?? 1);
