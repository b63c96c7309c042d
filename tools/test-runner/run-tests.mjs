#!/usr/bin/env node
// Runs the compiled test files with node's test runner. Unit specs (*.spec.js) need nothing; integration
// specs (*.int-spec.js) run one file at a time against the real local stack, which this script starts
// (and stops again what it started, also on SIGINT/SIGTERM). Usage: run-tests.mjs [--unit] [--project <dir>] [file filter...]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
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

// The stack's own API (infra/local): what it started is stopped again, whatever ends this run.
const stack = createRequire(import.meta.url)(join(root, 'infra', 'local', 'dist', 'src', 'index.js'));
let started = [];
let test;
let stopping;
const stopStarted = () =>
  (stopping ??= (async () => {
    if (process.env.CI === 'true' && process.env.STACK_KEEP !== 'true') await stack.down();
    else if (started.length && process.env.STACK_KEEP !== 'true') await stack.stopParts(started);
  })());
if (integration.length) {
  try {
    // An interrupted up stops what it started itself, then ends this process with the signal.
    ({ started } = await stack.bringUp());
  } catch (error) {
    console.error(`[stack] ${error.message}`);
    console.error('the local stack did not come up; see .stack/logs/');
    process.exit(1);
  }
}

// From here on, a signal stops the tests, then what this run started.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the tests and what this run started`);
    if (test?.pid) process.kill(-test.pid, signal);
    void stopStarted().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

test = spawn(
  process.execPath,
  ['--enable-source-maps', '--test', '--test-concurrency=1', '--test-reporter=spec', ...unit, ...integration],
  // Its own process group: a signal reaches the test files' processes too, and only through this runner.
  { stdio: 'inherit', cwd: root, env: { ...process.env, FORCE_COLOR: '0' }, detached: true },
);
const [code] = await once(test, 'exit');
await stopStarted();
console.log(
  `ran ${unit.length} unit and ${integration.length} integration files: ${[...unit, ...integration].map((f) => relative(root, f)).join(', ')}`.slice(
    0,
    4000,
  ),
);
process.exit(code ?? 1);
