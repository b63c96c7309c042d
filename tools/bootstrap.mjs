#!/usr/bin/env node
// Makes a fresh clone runnable, with nothing but Node: installs node_modules with `npm ci` when it is missing or
// does not match package-lock.json (a stamp of the lockfile's hash is kept in node_modules), builds, then runs
// the given script in this same process (so that signals reach it directly).
// Usage: node tools/bootstrap.mjs [<script.js> [args...]]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Module from 'node:module';

const root = resolve(import.meta.dirname, '..');
const stamp = join(root, 'node_modules', '.checkout-lock-sha256');
const say = (line) => console.error(`[bootstrap] ${line}`);
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

const lockHash = () =>
  createHash('sha256')
    .update(readFileSync(join(root, 'package-lock.json')))
    .digest('hex');

/** Why node_modules must be installed again, or undefined when it matches package-lock.json. */
function staleReason(hash) {
  if (!existsSync(join(root, 'node_modules'))) return 'node_modules is missing';
  if (existsSync(stamp))
    return readFileSync(stamp, 'utf8').trim() === hash ? undefined : 'package-lock.json changed';
  // No stamp (installed by hand): npm's own record of what it installed says whether it matches the lockfile.
  const hidden = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(hidden)) return 'node_modules was not installed by npm';
  const wanted = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages ?? {};
  const have = JSON.parse(readFileSync(hidden, 'utf8')).packages ?? {};
  for (const [path, pkg] of Object.entries(wanted)) {
    // Optional packages of other platforms are in the lockfile but never installed.
    if (!path.startsWith('node_modules/') || (pkg.optional && !have[path])) continue;
    if (have[path]?.version !== pkg.version) return `${path} is not the version package-lock.json pins`;
  }
  return undefined;
}

function run(command, args, what) {
  const started = Date.now();
  say(`${what}...`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    say(`${what} failed (${result.error?.message ?? `exit ${result.status ?? result.signal}`})`);
    process.exit(result.status ?? 1);
  }
  say(`${what}: done in ${seconds(started)}`);
}

const hash = lockHash();
const reason = staleReason(hash);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
if (reason) {
  // A progress bar on a terminal; elsewhere (CI, a log) one line per download instead of silence.
  const progress = process.stderr.isTTY ? ['--progress=true'] : ['--loglevel=http'];
  run(npm, ['ci', '--no-audit', '--no-fund', ...progress], `${reason}: npm ci`);
}
if (!existsSync(stamp) || reason) writeFileSync(stamp, `${hash}\n`);

const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const firstBuild = !existsSync(join(root, 'infra', 'local', 'dist'));
if (firstBuild)
  run(process.execPath, [tsc, '-b', 'tsconfig.json'], 'building every package (tsc -b, first run)');
else {
  const result = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const [script, ...rest] = process.argv.slice(2);
if (script) {
  // As if node had been started on the script itself: require.main is it, process.argv is its own.
  process.argv = [process.argv[0], resolve(root, script), ...rest];
  Module.runMain();
}
