// The jest settings every project shares. Specs run from each project's dist/ (compiled by `tsc -b`, which
// `npm test` and Nx's build dependency run first): the code under test and the specs use paths relative to
// their compiled files, and the local stack runs the services from dist/ anyway, so no transformer is needed.
const { existsSync, readFileSync, readdirSync, statSync } = require('node:fs');
const { basename, join } = require('node:path');

const ROOT = join(__dirname, '..', '..');
const SKIP = new Set(['node_modules', 'dist', '.stack']);

/** Global settings (jest reads them from the config it is started with, root or project). */
const GLOBAL = {
  // node ran a suite with `concurrency: true` all at once; the e2e saga paths rely on that to stay short
  maxConcurrency: 16,
  testSequencer: join(__dirname, 'sequencer.js'),
};

function hasFiles(dir, pattern) {
  if (!existsSync(dir)) return false;
  return readdirSync(dir).some((entry) => {
    if (SKIP.has(entry)) return false;
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? hasFiles(path, pattern) : pattern.test(entry);
  });
}

/** The unit and integration jest projects of one workspace project (only the kinds it has specs of). */
function projects(dir) {
  const name = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name ?? basename(dir);
  const common = {
    rootDir: dir,
    roots: ['<rootDir>/dist'],
    transform: {},
    testEnvironment: join(__dirname, 'environment.js'),
    setupFilesAfterEnv: [join(__dirname, 'timeouts.js')],
  };
  const out = [];
  if (hasFiles(dir, /(?<!\.int-spec)\.spec\.[cm]?[jt]s$/))
    out.push({
      ...common,
      displayName: `${name} unit`,
      testMatch: ['**/*.spec.js'],
    });
  if (hasFiles(dir, /\.int-spec\.[cm]?[jt]s$/))
    out.push({
      ...common,
      displayName: `${name} int`,
      testMatch: ['**/*.int-spec.js'],
      // One local stack for the whole run, one integration spec file at a time.
      runner: join(__dirname, 'serial-runner.js'),
      globalSetup: join(__dirname, 'stack-setup.js'),
      globalTeardown: join(__dirname, 'stack-teardown.js'),
    });
  return out;
}

/** A workspace project's jest.config.js: `jest` in its folder runs its unit and integration specs. */
function projectConfig(dir) {
  return { ...GLOBAL, projects: projects(dir) };
}

/** The root jest.config.js: every workspace project's jest projects in one run. */
function rootConfig() {
  const { workspaces = [] } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const dirs = workspaces
    .flatMap((w) =>
      w.endsWith('/*')
        ? readdirSync(join(ROOT, w.slice(0, -2))).map((d) => join(ROOT, w.slice(0, -2), d))
        : [join(ROOT, w)],
    )
    .filter((d) => existsSync(join(d, 'jest.config.js')))
    .sort();
  return { ...GLOBAL, projects: dirs.flatMap(projects) };
}

module.exports = { projectConfig, rootConfig };
