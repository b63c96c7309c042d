// jest's node environment, with the test code compiled in the process's own realm instead of a fresh vm
// context. The specs assert with node:assert/strict, whose deepEqual compares prototypes: in jest's default
// sandbox an array from node:fs or an object from fetch's res.json() (made by node's built-ins, outer realm)
// never equals a literal written in the spec (sandbox realm), though they look the same. Each test file
// still gets its own module registry; the cost is that jest's fake timers are not available (none are used).
const vm = require('node:vm');
const { TestEnvironment } = require('jest-environment-node');

const ownRealm = new WeakSet();
const compileFunction = vm.compileFunction;
// jest-runtime compiles every module with vm.compileFunction(..., { parsingContext }); for our environments'
// contexts the parsing context is dropped, which compiles the module in the current (main) realm.
vm.compileFunction = function compileInOwnRealm(code, params, options) {
  if (options?.parsingContext && ownRealm.has(options.parsingContext)) {
    const { parsingContext: _dropped, ...rest } = options;
    return compileFunction.call(this, code, params, rest);
  }
  return compileFunction.call(this, code, params, options);
};

/** The node test environment in the process's own realm (see above). */
class OwnRealmEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    ownRealm.add(this.context);
    this.global = globalThis;
  }

  // Each spec file starts with no pooled fetch connections, as under node:test (one process per file): in the
  // shared realm fetch's keep-alive pool would otherwise carry sockets to a service a previous file restarted.
  async setup() {
    await super.setup();
    const key = Symbol.for('undici.globalDispatcher.1');
    const previous = globalThis[key];
    if (previous?.constructor) {
      globalThis[key] = new previous.constructor();
      await previous.close().catch(() => undefined);
    }
  }
}

module.exports = OwnRealmEnvironment;
