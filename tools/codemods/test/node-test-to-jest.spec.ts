import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type Convert = (text: string, fileName: string) => string;
const ROOT = join(__dirname, '..', '..', '..');
// The codemod is an ES module (run with plain node); jest runs with --experimental-vm-modules.
const codemod = (): Promise<{ convert: Convert }> =>
  import(join(ROOT, 'tools', 'codemods', 'node-test-to-jest.mjs'));

const NODE_SPEC = `import { after, before, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';

const SLOW = process.env.SLOW === '1';

describe('a suite', { timeout: 9_000 }, () => {
  before(async () => undefined);
  after(() => undefined);
  it('uses the context', async (t) => {
    const f = mock.fn(() => 2);
    t.diagnostic('note');
    t.after(() => undefined);
    assert.equal(f(), 2);
    assert.equal(f.mock.callCount(), 1);
  });
  it('skipped when slow', { skip: SLOW, timeout: 1_000 }, () => {
    assert.ok(true);
  });
  it.only('only', () => {
    assert.ok(true);
  });
});
`;

describe('node-test-to-jest codemod', () => {
  it('converts a node:test spec: imports, hooks, options, the test context and mocks', async () => {
    const { convert } = await codemod();
    const out = convert(NODE_SPEC, 'a.spec.ts');
    assert.doesNotMatch(out, /node:test/);
    assert.match(out, /^import \{ afterAll, beforeAll, describe, it, jest \} from '@jest\/globals';/);
    assert.match(out, /beforeAll\(async \(\) => undefined, 9_000\);/);
    assert.match(out, /\(SLOW \? it\.skip : it\)\('skipped when slow', \(\) => \{/);
    assert.match(out, /\}, 1_000\);/);
    assert.match(out, /const f = jest\.fn\(\(\) => 2\);/);
    assert.match(out, /console\.info\('note'\);/);
    assert.match(out, /cleanups\.push\(\(\) => undefined\);/);
    assert.match(out, /f\.mock\.calls\.length/);
    assert.doesNotMatch(out, /\.only|\(t\)/);
    // the assertions are kept as they are, every one
    assert.equal(out.match(/assert\.\w+\(/g)?.length, NODE_SPEC.match(/assert\.\w+\(/g)?.length);
  });

  it('is idempotent: a converted spec converts to itself', async () => {
    const { convert } = await codemod();
    const once = convert(NODE_SPEC, 'a.spec.ts');
    assert.equal(convert(once, 'a.spec.ts'), once);
  });

  it('converts a file mixing both styles into one @jest/globals import, leaving jest calls as they are', async () => {
    const { convert } = await codemod();
    const mixed = `import { describe, it } from '@jest/globals';
import { before } from 'node:test';
const SKIP = false;
describe('x', { skip: SKIP }, () => {
  before(() => undefined);
  it('done style', (done) => done());
  it.concurrent('concurrent', async () => undefined);
});
`;
    const out = convert(mixed, 'm.spec.ts');
    assert.equal(out.match(/from '@jest\/globals'/g)?.length, 1);
    assert.match(out, /^import \{ beforeAll, describe, it \} from '@jest\/globals';/);
    assert.doesNotMatch(out, /node:test/);
    assert.match(out, /\(SKIP \? describe\.skip : describe\)\('x', \(\) => \{/);
    assert.match(out, /it\('done style', \(done\) => done\(\)\);/);
    assert.match(out, /it\.concurrent\('concurrent'/);
    assert.equal(convert(out, 'm.spec.ts'), out);
  });

  it('leaves a run-time t.skip() for a person (the build then fails on the left-over t)', async () => {
    const { convert } = await codemod();
    const out = convert(
      `import { it } from 'node:test';\nit('x', (t) => {\n  if (process.env.X) return t.skip('why');\n});\n`,
      's.spec.ts',
    );
    assert.match(out, /it\('x', \(\) => \{/);
    assert.match(out, /return t\.skip\('why'\);/);
  });

  it('finds nothing left to convert in the repo (run it after merging node:test specs)', async () => {
    const { convert } = await codemod();
    const files = execFileSync('git', ['ls-files', '*.spec.ts', '*.int-spec.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);
    assert.ok(files.length > 90, `${files.length} spec files`);
    const stale = files.filter((f) => {
      const text = readFileSync(join(ROOT, f), 'utf8');
      // (a real import only: this spec's own samples mention node:test in strings)
      return convert(text, join(ROOT, f)) !== text;
    });
    assert.deepEqual(stale, [], 'node tools/codemods/node-test-to-jest.mjs converts these');
  });
});
