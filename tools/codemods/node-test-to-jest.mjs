#!/usr/bin/env node
// Converts node:test specs to jest and wires every workspace project that has specs to jest.
// Converted files are formatted with the repo's prettier. Idempotent: a file without a `node:test` or
// `@jest/globals` import is left alone, a converted file converts to itself, a project already wired is
// rewritten to the same text. A file that mixes both styles (imports from both, or node-style options on jest's
// functions) is converted too, into one @jest/globals import. Uses the TypeScript parser the repo already pins (no other dependency); every change is an edit
// at a position the parser found, so the rest of a file stays byte for byte.
//
//   node tools/codemods/node-test-to-jest.mjs [--check] [path...]
//
// Without paths it walks every workspace project of the root package.json. --check changes nothing and exits 1
// when something would change (for CI or for the lead after a merge). What it cannot convert faithfully it
// says on stderr, with file and line, and leaves for a person (a left-over `t.` then fails to compile).
//
// Rules (node:test -> jest):
//   imports      describe, suite -> describe; it, test; before -> beforeAll; after -> afterAll; beforeEach,
//                afterEach; mock -> jest. Default and namespace imports of node:test too. Imported from
//                '@jest/globals'; the local names keep their aliases, unaliased before/after/suite are renamed.
//   options      it(name, { timeout, skip, todo, only, concurrency }, fn) -> it(name, fn, timeout), with skip
//                -> it.skip (a non-literal skip: (cond ? it.skip : it)), todo -> it.todo(name), only dropped
//                (node runs every test without --test-only). describe(name, { timeout, concurrency }, fn):
//                jest has no suite timeout, so each test and hook inside without its own timeout gets it; the
//                tests of a suite with concurrency (inherited, as in node) become it.concurrent (up to jest's
//                maxConcurrency). Hook options before(fn, { timeout }) likewise.
//   modifiers    it.only / describe.only -> it / describe (a committed .only would skip the rest in jest);
//                it.todo(name, fn) -> it.todo(name); describe.todo -> describe.skip; it(name) -> it.todo(name).
//   context t    the first parameter of a test or hook callback is removed (a second one, done, stays):
//                t.diagnostic(x) -> console.info(x); t.after(fn) -> run after the body (try/finally);
//                t.mock.* -> jest.* restored after the test; t.name -> expect.getState().currentTestName;
//                t.skip(r) / t.todo(r) -> left, with a warning (jest cannot skip at run time; the build then
//                fails on the left-over `t` until a person writes `{ skip: cond }` or a stated condition).
//   mixed files  names imported from @jest/globals get the options rules (not the context rule: their
//                callback's parameter is jest's `done`); the node:test names are merged into that import.
//   mock         mock.fn(f) -> jest.fn(f); mock.method(o, m, f) -> jest.spyOn(o, m).mockImplementation(f);
//                mock.getter/setter -> jest.spyOn(o, m, 'get'/'set'); mock.restoreAll()/reset() ->
//                jest.restoreAllMocks(); mock.timers.enable/tick/reset -> jest fake timers;
//                x.mock.callCount() -> x.mock.calls.length; x.mock.calls[i].arguments -> x.mock.calls[i].
//   top level    `await x;` at the top of a module -> beforeAll(async () => { await x; }).
//   projects     a workspace project with *.spec.* or *.int-spec.* files gets jest.config.js (from
//                tools/jest/preset.js) and "test": "node --experimental-vm-modules <root>/node_modules/jest/bin/
//                jest.js" (the Nx test target); a test script on node --test, tools/test-runner or jest
//                is replaced.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as prettier from 'prettier';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..', '..');
const JEST_NAME = {
  describe: 'describe',
  suite: 'describe',
  it: 'it',
  test: 'test',
  before: 'beforeAll',
  after: 'afterAll',
  beforeEach: 'beforeEach',
  afterEach: 'afterEach',
  mock: 'jest',
};
const TESTS = new Set(['it', 'test']);
const HOOKS = new Set(['beforeAll', 'afterAll', 'beforeEach', 'afterEach']);
const SKIP_DIRS = new Set(['node_modules', 'dist', '.stack', '.git', '.nx', 'coverage']);
const SOURCE_EXT = /\.(ts|mts|cts|js|mjs|cjs)$/;
const SPEC_FILE = /\.(int-)?spec\.(ts|mts|cts|js|mjs|cjs)$/;

const warnings = [];

function walk(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir)) {
    if (SKIP_DIRS.has(entry)) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}

/** The workspace project folders of the root package.json (`dir/*` and plain entries). */
function workspaceProjects() {
  const { workspaces = [] } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return workspaces
    .flatMap((pattern) =>
      pattern.endsWith('/*')
        ? readdirSync(join(ROOT, pattern.slice(0, -2))).map((d) => join(pattern.slice(0, -2), d))
        : [pattern],
    )
    .map((p) => join(ROOT, p))
    .filter((p) => existsSync(join(p, 'package.json')))
    .sort();
}

/** Converts one file's text; returns the new text (the same text when nothing applies). */
export function convert(text, fileName) {
  const kind = fileName.endsWith('.ts') || fileName.endsWith('.mts') || fileName.endsWith('.cts');
  const sf = ts.createSourceFile(
    fileName,
    text,
    ts.ScriptTarget.Latest,
    true,
    kind ? ts.ScriptKind.TS : ts.ScriptKind.JS,
  );
  const imports = sf.statements.filter(
    (s) =>
      ts.isImportDeclaration(s) &&
      ts.isStringLiteral(s.moduleSpecifier) &&
      s.moduleSpecifier.text === 'node:test',
  );
  // A file that already imports @jest/globals (converted by hand, or mixing both styles): its jest names are
  // test functions too, and node-style options on them (`describe(name, { skip }, fn)`) are converted.
  const jestImports = sf.statements.filter(
    (s) =>
      ts.isImportDeclaration(s) &&
      ts.isStringLiteral(s.moduleSpecifier) &&
      s.moduleSpecifier.text === '@jest/globals' &&
      !s.importClause?.isTypeOnly,
  );
  if (imports.length === 0 && jestImports.length === 0) return text;

  const edits = [];
  const edit = (start, end, replacement) => edits.push({ start, end, text: replacement, seq: edits.length });
  const line = (node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const warn = (node, message) => warnings.push(`${relative(ROOT, fileName)}:${line(node)}: ${message}`);

  // local name -> node:test export it stands for; namespace locals separately
  const locals = new Map();
  const namespaces = new Set();
  for (const decl of imports) {
    const clause = decl.importClause;
    if (!clause) continue;
    if (clause.name) locals.set(clause.name.text, 'test');
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings))
      for (const el of bindings.elements) {
        const imported = (el.propertyName ?? el.name).text;
        if (!(imported in JEST_NAME))
          warn(el, `node:test export '${imported}' has no jest counterpart: left as is`);
        locals.set(el.name.text, imported);
      }
  }

  // local name -> @jest/globals export, for the test functions and hooks the file imports from jest
  const jestLocals = new Map();
  for (const decl of jestImports) {
    const bindings = decl.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings))
      for (const el of bindings.elements) {
        const imported = (el.propertyName ?? el.name).text;
        if (['describe', 'it', 'test', ...HOOKS].includes(imported) && !el.isTypeOnly)
          jestLocals.set(el.name.text, imported);
      }
  }

  const needed = new Map(); // jest export -> local name used in the file
  const need = (jestName, local = jestName) => {
    if (!needed.has(jestName) || needed.get(jestName) === jestName) needed.set(jestName, local);
    return local;
  };
  // The jest name a local will have after conversion (aliases kept, plain node names renamed).
  const localJestName = (local) => {
    const nodeName = locals.get(local);
    const jestName = JEST_NAME[nodeName];
    return local === nodeName ? jestName : local;
  };

  // Which node:test export an expression denotes: `it`, `ns.it`, or undefined. Shadowed names are ignored.
  const declaredInScope = (id) => {
    for (let n = id.parent; n; n = n.parent) {
      const params = ts.isFunctionLike(n) ? n.parameters : [];
      for (const p of params) if (ts.isIdentifier(p.name) && p.name.text === id.text) return true;
      if (ts.isBlock(n) || ts.isSourceFile(n))
        for (const st of n.statements)
          if (ts.isVariableStatement(st) && n !== sf)
            for (const d of st.declarationList.declarations)
              if (ts.isIdentifier(d.name) && d.name.text === id.text) return true;
    }
    return false;
  };
  // Which @jest/globals test function or hook an identifier denotes (the file's own jest import), or undefined.
  const jestExportOf = (expr) =>
    ts.isIdentifier(expr) && jestLocals.has(expr.text) && !declaredInScope(expr)
      ? jestLocals.get(expr.text)
      : undefined;
  const nodeExportOf = (expr) => {
    if (ts.isIdentifier(expr) && locals.has(expr.text) && !declaredInScope(expr))
      return locals.get(expr.text);
    if (
      ts.isPropertyAccessExpression(expr) &&
      ts.isIdentifier(expr.expression) &&
      namespaces.has(expr.expression.text)
    )
      return expr.name.text;
    return undefined;
  };

  const handled = new Set(); // identifier nodes already rewritten by a call rule

  // The jest local name of a reference (identifier or ns.x), registering the import.
  const jestLocal = (expr) => {
    const jestName = JEST_NAME[nodeExportOf(expr)];
    if (!jestName) return undefined;
    const local = ts.isIdentifier(expr) ? localJestName(expr.text) : jestName;
    need(jestName, local);
    handled.add(expr);
    return local;
  };
  // Renames a reference to its jest local name.
  const renameRef = (expr) => {
    const local = jestLocal(expr);
    if (local !== undefined && expr.getText(sf) !== local) edit(expr.getStart(sf), expr.getEnd(), local);
    return local;
  };

  /** Reads a node:test options object literal. */
  const readOptions = (obj) => {
    const out = {};
    for (const prop of obj.properties) {
      if (!ts.isPropertyAssignment(prop) && !ts.isShorthandPropertyAssignment(prop)) {
        warn(prop, 'test options with a spread or method: left for a person');
        out.unknown = true;
        continue;
      }
      const key = prop.name.getText(sf);
      const value = ts.isPropertyAssignment(prop) ? prop.initializer : prop.name;
      if (['timeout', 'skip', 'todo', 'only', 'concurrency'].includes(key)) out[key] = value;
      else {
        warn(prop, `test option '${key}' has no jest counterpart: dropped`);
      }
    }
    return out;
  };
  const literalTruth = (expr) => {
    if (!expr) return false;
    if (expr.kind === ts.SyntaxKind.TrueKeyword) return true;
    if (expr.kind === ts.SyntaxKind.FalseKeyword) return false;
    if (ts.isStringLiteralLike(expr)) return expr.text.length > 0;
    if (ts.isNumericLiteral(expr)) return Number(expr.text) !== 0;
    return undefined; // decided at run time
  };
  const isFn = (n) => n && (ts.isArrowFunction(n) || ts.isFunctionExpression(n));
  const hasEachHook = (fn) => {
    let found = false;
    const visit = (n) => {
      if (ts.isCallExpression(n) && ['beforeEach', 'afterEach'].includes(nodeExportOf(n.expression)))
        found = true;
      else ts.forEachChild(n, visit);
    };
    visit(fn.body);
    return found;
  };
  // Whether an expression awaits outside any nested function (a top-level await).
  const awaitsAtTopLevel = (node) => {
    let found = false;
    const visit = (n) => {
      if (ts.isAwaitExpression(n) || (ts.isForOfStatement(n) && n.awaitModifier)) found = true;
      else if (!ts.isFunctionLike(n) && !ts.isClassLike(n)) ts.forEachChild(n, visit);
    };
    visit(node);
    return found;
  };

  // The first parameter of a test/hook callback is node's context `t`: rewrite its uses, drop it.
  const convertContext = (fn) => {
    if (!isFn(fn) || fn.parameters.length === 0) return;
    const param = fn.parameters[0];
    if (!ts.isIdentifier(param.name)) {
      warn(param, 'destructured test context: left for a person');
      return;
    }
    const name = param.name.text;
    let cleanups = false;
    let mocks = false;
    const shadows = (n) =>
      ts.isFunctionLike(n) && n.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === name);
    const visit = (n) => {
      if (shadows(n)) return;
      if (ts.isIdentifier(n) && n.text === name && n !== param.name) {
        const parent = n.parent;
        if (ts.isPropertyAccessExpression(parent) && parent.expression === n) {
          const member = parent.name.text;
          const call =
            ts.isCallExpression(parent.parent) && parent.parent.expression === parent
              ? parent.parent
              : undefined;
          if (member === 'diagnostic' && call) edit(parent.getStart(sf), parent.getEnd(), 'console.info');
          else if ((member === 'after' || member === 'afterEach') && call) {
            cleanups = true;
            edit(parent.getStart(sf), parent.getEnd(), 'cleanups.push');
          } else if ((member === 'skip' || member === 'todo') && call) {
            // jest cannot skip a test that is running: a console line would count it as passed. Left as it
            // is, the build fails on it (the parameter is gone) until a person writes the condition.
            warn(
              n,
              `${name}.${member}() at run time: jest cannot skip a running test; left for a person (a skip condition known when the test is defined, or a stated condition asserted in the test)`,
            );
          } else if (member === 'name') {
            need('expect');
            edit(parent.getStart(sf), parent.getEnd(), 'expect.getState().currentTestName');
          } else if (member === 'mock') {
            mocks = true;
            // t.mock.x(...) -> the module-level rules below, with `jest` in place of `t.mock`
            mockRule(parent, true);
          } else warn(n, `${name}.${member} has no jest counterpart: left for a person`);
          return;
        }
        warn(n, `test context ${name} used as a value: left for a person`);
        return;
      }
      ts.forEachChild(n, visit);
    };
    visit(fn.body);
    // drop the parameter (and the comma after it when `done` follows)
    const next = fn.parameters[1];
    edit(param.getStart(sf), next ? next.getStart(sf) : param.getEnd(), '');
    if (!cleanups && !mocks) return;
    const typed = kind ? ': Array<() => unknown>' : '';
    const initial = mocks ? '[() => jest.restoreAllMocks()]' : '[]';
    if (mocks) need('jest');
    const head = `const cleanups${typed} = ${initial};\n`;
    const tail = 'for (const cleanup of cleanups.reverse()) await cleanup();';
    if (!fn.modifiers?.some((m) => m.kind === ts.SyntaxKind.AsyncKeyword))
      edit(fn.getStart(sf), fn.getStart(sf), 'async ');
    if (ts.isBlock(fn.body)) {
      edit(fn.body.getStart(sf) + 1, fn.body.getStart(sf) + 1, `\n${head}try {`);
      edit(fn.body.getEnd() - 1, fn.body.getEnd() - 1, `} finally {\n${tail}\n}\n`);
    } else {
      edit(fn.body.getStart(sf), fn.body.getStart(sf), `{\n${head}try {\nreturn `);
      edit(fn.body.getEnd(), fn.body.getEnd(), `;\n} finally {\n${tail}\n}\n}`);
    }
  };

  // mock.fn / mock.method / ... where `target` is the `mock` reference (or `t.mock`).
  const mockRule = (target, fromContext) => {
    const access = target.parent;
    if (!ts.isPropertyAccessExpression(access) || access.expression !== target) {
      if (!fromContext) renameRef(target);
      else warn(target, 't.mock used as a value: left for a person');
      return;
    }
    need('jest');
    const member = access.name.text;
    const call =
      ts.isCallExpression(access.parent) && access.parent.expression === access ? access.parent : undefined;
    const args = call ? call.arguments.map((a) => a.getText(sf)) : [];
    const replaceCall = (textOut) => edit(call.getStart(sf), call.getEnd(), textOut);
    handled.add(target);
    if (member === 'fn' && call) replaceCall(`jest.fn(${args.join(', ')})`);
    else if (member === 'method' && call)
      replaceCall(`jest.spyOn(${args[0]}, ${args[1]})${args[2] ? `.mockImplementation(${args[2]})` : ''}`);
    else if ((member === 'getter' || member === 'setter') && call)
      replaceCall(
        `jest.spyOn(${args[0]}, ${args[1]}, '${member === 'getter' ? 'get' : 'set'}')${args[2] ? `.mockImplementation(${args[2]})` : ''}`,
      );
    else if ((member === 'restoreAll' || member === 'reset') && call) replaceCall('jest.restoreAllMocks()');
    else if (member === 'timers' && ts.isPropertyAccessExpression(access.parent)) {
      const timer = access.parent.name.text;
      const tcall = ts.isCallExpression(access.parent.parent) ? access.parent.parent : undefined;
      const targs = tcall ? tcall.arguments.map((a) => a.getText(sf)) : [];
      const map = {
        enable: 'jest.useFakeTimers()',
        reset: 'jest.useRealTimers()',
        tick: `jest.advanceTimersByTime(${targs[0] ?? ''})`,
        runAll: 'jest.runAllTimers()',
      };
      if (tcall && map[timer]) edit(tcall.getStart(sf), tcall.getEnd(), map[timer]);
      else warn(access, `mock.timers.${timer} has no direct jest counterpart: left for a person`);
    } else warn(access, `mock.${member} has no direct jest counterpart: left for a person`);
  };

  // Test and suite calls; a describe's timeout and concurrency pass down to what it contains.
  const visitCalls = (node, inherited) => {
    if (ts.isCallExpression(node)) {
      let callee = node.expression;
      let modifier;
      if (
        ts.isPropertyAccessExpression(callee) &&
        nodeExportOf(callee) === undefined &&
        (nodeExportOf(callee.expression) || jestExportOf(callee.expression))
      ) {
        modifier = callee.name.text;
        callee = callee.expression;
      }
      const nodeName = nodeExportOf(callee);
      const fromJest = !nodeName && jestExportOf(callee);
      const jestName = fromJest || JEST_NAME[nodeName];
      if (jestName && jestName !== 'jest') {
        const own = convertCall(node, callee, jestName, modifier, inherited, Boolean(fromJest));
        if (jestName === 'describe') {
          for (const arg of node.arguments) visitCalls(arg, { ...inherited, ...own });
          return;
        }
      }
    }
    ts.forEachChild(node, (child) => visitCalls(child, inherited));
  };

  /** Rewrites one describe/it/test/hook call; returns a describe's own { timeout, concurrent } for its children. */
  // fromJest: the callee is already jest's (imported from @jest/globals): only node-style options are converted,
  // its callback's parameter is jest's `done`, never node's context.
  const convertCall = (call, callee, jestName, modifier, inherited, fromJest = false) => {
    const args = call.arguments;
    const local = fromJest ? callee.getText(sf) : jestLocal(callee);
    const convertContextOf = (fn) => (fromJest ? undefined : convertContext(fn));
    if (fromJest) {
      // jest's own modifiers (it.concurrent, it.each, ...) and calls without node options are left as they are
      const jestModifier = modifier && !['only', 'skip', 'todo'].includes(modifier);
      const hasOptions = args[1] && ts.isObjectLiteralExpression(args[1]);
      // (what a node-style describe around it passes down, its timeout and concurrency, still applies)
      if (jestModifier || (!hasOptions && !inherited.timeout && !inherited.concurrent)) return undefined;
    }
    if (HOOKS.has(jestName)) {
      if (call.expression.getText(sf) !== local)
        edit(call.expression.getStart(sf), call.expression.getEnd(), local);
      const fn = args[0];
      const opts = args[1] && ts.isObjectLiteralExpression(args[1]) ? readOptions(args[1]) : undefined;
      convertContextOf(fn);
      const timeout = opts?.timeout?.getText(sf) ?? inherited.timeout;
      if (opts) edit(args[0].getEnd(), args[1].getEnd(), timeout ? `, ${timeout}` : '');
      else if (timeout && args.length === 1) edit(fn.getEnd(), fn.getEnd(), `, ${timeout}`);
      return undefined;
    }
    // (name, options?, fn?)
    const [first, second, third] = args;
    if (!first || isFn(first) || ts.isObjectLiteralExpression(first)) {
      warn(call, `${jestName}() without a name first: left for a person`);
      return undefined;
    }
    let opts;
    let fn;
    if (second && ts.isObjectLiteralExpression(second)) {
      opts = readOptions(second);
      fn = third;
    } else fn = second;
    if (modifier === 'only' || literalTruth(opts?.only))
      warn(call, `.only dropped: node runs every test without --test-only, jest would skip the others`);
    let mode = modifier === 'skip' ? 'skip' : modifier === 'todo' ? 'todo' : undefined;
    if (modifier && !['only', 'skip', 'todo'].includes(modifier)) {
      warn(call, `${jestName}.${modifier} left as is`);
      return undefined;
    }
    let condition;
    if (opts && 'skip' in opts) {
      const truth = literalTruth(opts.skip);
      if (truth === true) mode = mode ?? 'skip';
      else if (truth === undefined && !mode) condition = opts.skip.getText(sf);
    }
    if (opts && 'todo' in opts && literalTruth(opts.todo) !== false) mode = 'todo';
    if (!fn && TESTS.has(jestName)) mode = 'todo';
    if (jestName === 'describe' && mode === 'todo') mode = 'skip';
    const calleeStart = call.expression.getStart(sf);
    const calleeEnd = call.expression.getEnd();
    // node runs the tests of a suite with `concurrency` at once (beforeAll/afterAll around them): it.concurrent
    const concurrent = TESTS.has(jestName) && inherited.concurrent && mode !== 'todo';
    const base = concurrent ? `${local}.concurrent` : local;
    let calleeText = mode ? `${base}.${mode}` : base;
    if (condition) calleeText = `(${condition} ? ${base}.skip : ${base})`;
    if (calleeText !== call.expression.getText(sf)) edit(calleeStart, calleeEnd, calleeText);

    if (mode === 'todo' && TESTS.has(jestName)) {
      if (args.length > 1) edit(first.getEnd(), args[args.length - 1].getEnd(), '');
      return undefined;
    }
    const ownTimeout = opts?.timeout?.getText(sf);
    if (opts) edit(first.getEnd(), fn ? fn.getStart(sf) : second.getEnd(), fn ? ', ' : '');
    if (jestName === 'describe') {
      const own = {};
      if (ownTimeout) own.timeout = ownTimeout;
      if (opts && 'concurrency' in opts) {
        const c = opts.concurrency;
        if (ts.isNumericLiteral(c)) {
          own.concurrent = Number(c.text) > 1;
          if (own.concurrent) warn(c, `concurrency ${c.text}: jest's limit is its maxConcurrency setting`);
        } else if (literalTruth(c) !== undefined) own.concurrent = literalTruth(c);
        else warn(c, 'concurrency decided at run time: the tests run one by one');
        if (own.concurrent && fn && hasEachHook(fn))
          warn(c, 'jest runs no beforeEach/afterEach around concurrent tests: check this suite by hand');
      }
      return own;
    }
    convertContextOf(fn);
    const timeout = ownTimeout ?? inherited.timeout;
    if (timeout && fn && !args[args.indexOf(fn) + 1]) edit(fn.getEnd(), fn.getEnd(), `, ${timeout}`);
    return undefined;
  };

  visitCalls(sf, {});

  // Remaining references: mock.* and plain renames (e.g. a helper that calls before()).
  const visitRefs = (node) => {
    if (ts.isIdentifier(node) && !handled.has(node) && locals.has(node.text) && !declaredInScope(node)) {
      const parent = node.parent;
      const isImport =
        ts.isImportSpecifier(parent) || ts.isImportClause(parent) || ts.isNamespaceImport(parent);
      const isMember = ts.isPropertyAccessExpression(parent) && parent.name === node;
      const isKey =
        (ts.isPropertyAssignment(parent) || ts.isMethodDeclaration(parent)) && parent.name === node;
      if (!isImport && !isMember && !isKey) {
        if (locals.get(node.text) === 'mock') mockRule(node, false);
        else renameRef(node);
      }
    }
    ts.forEachChild(node, visitRefs);
  };
  visitRefs(sf);

  // Node mocks' inspection API -> jest's, only in files that mock.
  if (needed.has('jest')) {
    const visitMockApi = (node) => {
      if (ts.isPropertyAccessExpression(node) && node.name.text === 'mock') {
        const up1 = node.parent;
        if (
          ts.isPropertyAccessExpression(up1) &&
          up1.expression === node &&
          up1.name.text === 'callCount' &&
          ts.isCallExpression(up1.parent)
        )
          edit(up1.name.getStart(sf), up1.parent.getEnd(), 'calls.length');
        if (
          ts.isPropertyAccessExpression(up1) &&
          up1.name.text === 'calls' &&
          ts.isElementAccessExpression(up1.parent)
        ) {
          const el = up1.parent;
          const up3 = el.parent;
          if (ts.isPropertyAccessExpression(up3) && up3.name.text === 'arguments')
            edit(el.getEnd(), up3.getEnd(), '');
          if (ts.isPropertyAccessExpression(up3) && up3.name.text === 'result') {
            edit(up1.name.getStart(sf), up1.name.getEnd(), 'results');
            edit(el.getEnd(), up3.getEnd(), '.value');
          }
        }
      }
      ts.forEachChild(node, visitMockApi);
    };
    visitMockApi(sf);
  }

  // Top-level `await x;` -> beforeAll.
  for (const st of imports.length ? sf.statements : []) {
    if (ts.isExpressionStatement(st) && ts.isAwaitExpression(st.expression)) {
      const local = need('beforeAll', needed.get('beforeAll') ?? 'beforeAll');
      edit(st.getStart(sf), st.getEnd(), `${local}(async () => {\n  ${st.getText(sf)}\n});`);
    } else if (ts.isVariableStatement(st) && awaitsAtTopLevel(st))
      warn(st, 'top-level await in a declaration: move it into beforeAll by hand');
  }

  // One import from @jest/globals in place of the node:test ones.
  const specifiers = [...needed.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([jestName, local]) => (jestName === local ? jestName : `${jestName} as ${local}`));
  // Merged into the file's own @jest/globals import where it has one (a file mixing both styles).
  const existing = jestImports.find(
    (d) => d.importClause?.namedBindings && ts.isNamedImports(d.importClause.namedBindings),
  );
  if (existing) {
    const kept = existing.importClause.namedBindings.elements.map((el) => el.getText(sf));
    const keptLocals = new Set(existing.importClause.namedBindings.elements.map((el) => el.name.text));
    const added = specifiers.filter((sp) => !keptLocals.has(sp.split(' as ').pop()));
    if (added.length) {
      const all = [...kept, ...added].sort((x, y) => x.localeCompare(y));
      edit(existing.getStart(sf), existing.getEnd(), `import { ${all.join(', ')} } from '@jest/globals';`);
    }
  }
  imports.forEach((decl, i) => {
    const end = decl.getEnd();
    if (i === 0 && !existing)
      edit(
        decl.getStart(sf),
        end,
        specifiers.length ? `import { ${specifiers.join(', ')} } from '@jest/globals';` : '',
      );
    else edit(decl.getStart(sf), text[end] === '\n' ? end + 1 : end, '');
  });

  // From the end backwards; of two insertions at one place the one pushed first ends up first.
  edits.sort((a, b) => b.start - a.start || b.end - a.end || b.seq - a.seq);
  let out = text;
  let last = Infinity;
  for (const e of edits) {
    if (e.end > last)
      throw new Error(`${relative(ROOT, fileName)}: overlapping edits at ${e.start}-${e.end}`);
    out = out.slice(0, e.start) + e.text + out.slice(e.end);
    last = e.start === e.end ? e.start + 0.5 : e.start;
  }
  return out;
}

const JEST_CONFIG = (projectDir) => {
  const preset = relative(projectDir, join(ROOT, 'tools', 'jest', 'preset.js'))
    .split('\\')
    .join('/');
  return `/** This project's unit specs and integration specs for jest (the shared settings: tools/jest/preset.js). */\nmodule.exports = require('${preset.startsWith('.') ? preset : `./${preset}`}').projectConfig(__dirname);\n`;
};

/** Wires a project with specs to jest: jest.config.js and its package.json test script. */
function wireProject(dir, write) {
  const files = walk(dir).filter((f) => SPEC_FILE.test(f));
  if (files.length === 0) return [];
  const changed = [];
  const configPath = join(dir, 'jest.config.js');
  const config = JEST_CONFIG(dir);
  if (!existsSync(configPath) || readFileSync(configPath, 'utf8') !== config) {
    changed.push(configPath);
    if (write) writeFileSync(configPath, config);
  }
  const pkgPath = join(dir, 'package.json');
  const raw = readFileSync(pkgPath, 'utf8');
  const pkg = JSON.parse(raw);
  const script = pkg.scripts?.test;
  // jest from the root's node_modules, with ES module support for the specs that import() ES-only packages
  const jestBin = relative(dir, join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'))
    .split('\\')
    .join('/');
  const wanted = `node --experimental-vm-modules ${jestBin}`;
  if (
    script === undefined ||
    (script !== wanted &&
      /tools\/test-runner|node\s+(.*\s)?--test\b|^jest\b|jest\/bin\/jest\.js/.test(script))
  ) {
    pkg.scripts = { ...pkg.scripts, test: wanted };
    const indent = raw.match(/^[ \t]+/m)?.[0] ?? '  ';
    const next = `${JSON.stringify(pkg, null, indent)}\n`;
    if (next !== raw) {
      changed.push(pkgPath);
      if (write) writeFileSync(pkgPath, next);
    }
  }
  return changed;
}

async function main() {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const paths = args.filter((a) => !a.startsWith('--')).map((p) => resolve(p));
  const projects = workspaceProjects();
  const roots = paths.length ? paths : projects;
  const files = roots
    .flatMap((p) => (statSync(p).isDirectory() ? walk(p) : [p]))
    .filter((f) => SOURCE_EXT.test(f) && !f.endsWith('.d.ts'));
  const changed = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes('node:test') && !text.includes('@jest/globals')) continue;
    let out = convert(text, file);
    if (out !== text) {
      out = await prettier.format(out, { ...(await prettier.resolveConfig(file)), filepath: file });
      changed.push(file);
      if (!check) writeFileSync(file, out);
    }
  }
  const wired = paths.length ? [] : projects.flatMap((p) => wireProject(p, !check));
  for (const w of warnings) console.error(`warning: ${w}`);
  const all = [...changed, ...wired].map((f) => relative(ROOT, f));
  console.log(
    `${check ? 'would change' : 'changed'} ${all.length} file(s)${all.length ? `:\n  ${all.join('\n  ')}` : ''}`,
  );
  if (check && all.length) process.exitCode = 1;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await main();
