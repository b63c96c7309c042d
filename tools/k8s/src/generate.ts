import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from '@checkout/local-stack';
import { generatedFiles } from './generated';

/** Writes infra/k8s/base and docs/asyncapi.yaml; `--check` only reports files that differ (exit 1). */
const check = process.argv.includes('--check');
const stale: string[] = [];
for (const [path, content] of Object.entries(generatedFiles())) {
  const file = join(REPO_ROOT, path);
  const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  if (current === content) continue;
  stale.push(path);
  if (!check) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}
console.log(
  stale.length === 0 ? 'generated files are current' : `${check ? 'stale' : 'wrote'}: ${stale.join(', ')}`,
);
if (check && stale.length) process.exit(1);
