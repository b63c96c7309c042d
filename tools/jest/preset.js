// The jest settings every project shares. Specs run from their TypeScript sources (src/, test/), compiled on
// the fly by @swc/jest; the workspace packages they import (@checkout/*) are mapped to their sources too, so
// one module instance of each is loaded. The local stack still runs the services from dist/ (`tsc -b`, which
// `npm test` and Nx's build dependency run first).
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

/** The workspace project folders of the root package.json. */
function workspaceDirs() {
  const { workspaces = [] } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return workspaces
    .flatMap((w) =>
      w.endsWith('/*')
        ? readdirSync(join(ROOT, w.slice(0, -2))).map((d) => join(ROOT, w.slice(0, -2), d))
        : [join(ROOT, w)],
    )
    .filter((d) => existsSync(join(d, 'package.json')))
    .sort();
}

/** `@checkout/x` -> the source of its compiled main (dist/src/index.js -> src/index.ts). */
function sourceMap() {
  const map = {};
  for (const dir of workspaceDirs()) {
    const { name, main } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    if (!name || !main || !/^(\.\/)?dist\/.+\.js$/.test(main)) continue;
    const source = join(dir, main.replace(/^(\.\/)?dist\//, '').replace(/\.js$/, '.ts'));
    if (existsSync(source)) map[`^${name.replace(/[/\\^$*+?.()|[\]{}]/g, '\\$&')}$`] = source;
  }
  return map;
}

// swc in the shape tsc compiles (tsconfig.base.json): CommonJS, ES2022, legacy decorators with their design
// metadata (NestJS's dependency injection reads the constructor parameter types from `design:paramtypes`,
// emitted only with decoratorMetadata). `import()` is kept as it is, as tsc's node16 output does: the
// kubernetes-models packages are ES modules only (jest runs with --experimental-vm-modules for them).
const SWC = {
  swcrc: false,
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs', ignoreDynamic: true },
  sourceMaps: 'inline',
};
const TRANSFORMS = {
  swc: ['@swc/jest', SWC],
  // ts-jest's transpile-only mode (isolatedModules: one file at a time, no type check; `tsc -b` checks types)
  'ts-jest': ['ts-jest', { tsconfig: join(ROOT, 'tsconfig.base.json'), isolatedModules: true }],
};
const TRANSFORM = TRANSFORMS[process.env.CHECKOUT_JEST_TRANSFORM ?? 'swc'];

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
    roots: ['src', 'test'].filter((d) => existsSync(join(dir, d))).map((d) => `<rootDir>/${d}`),
    moduleFileExtensions: ['ts', 'js', 'json'],
    moduleNameMapper: sourceMap(),
    transform: { '^.+\\.ts$': TRANSFORM },
    testEnvironment: join(__dirname, 'environment.js'),
    setupFilesAfterEnv: [join(__dirname, 'timeouts.js')],
  };
  const out = [];
  if (hasFiles(dir, /(?<!\.int-spec)\.spec\.ts$/))
    out.push({
      ...common,
      displayName: `${name} unit`,
      testMatch: ['**/*.spec.ts'],
      testPathIgnorePatterns: ['\\.int-spec\\.ts$'],
    });
  if (hasFiles(dir, /\.int-spec\.ts$/))
    out.push({
      ...common,
      displayName: `${name} int`,
      testMatch: ['**/*.int-spec.ts'],
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

/**
 * The root jest.config.js: every workspace project's jest projects in one run; with `{ unit: true }` (the root
 * jest.unit.config.js, `npm run test:unit`) only the unit projects, which need no stack.
 */
function rootConfig({ unit = false } = {}) {
  const dirs = workspaceDirs().filter((d) => existsSync(join(d, 'jest.config.js')));
  const all = dirs.flatMap(projects);
  return { ...GLOBAL, projects: unit ? all.filter((p) => p.displayName.endsWith(' unit')) : all };
}

module.exports = { projectConfig, rootConfig };
