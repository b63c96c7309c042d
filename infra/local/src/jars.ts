import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, StackConfig } from './config';
import { run } from './processes';

const POM = join(REPO_ROOT, 'infra', 'local', 'pom.xml');

/** Versions pinned in infra/local/pom.xml, read from it so there is one place to change them. */
export function pinnedVersions(): { kafka: string; debezium: string } {
  const pom = readFileSync(POM, 'utf8');
  const prop = (name: string) => {
    const m = new RegExp(`<${name}>([^<]+)</${name}>`).exec(pom);
    if (!m) throw new Error(`${POM} has no <${name}>`);
    return m[1];
  };
  return { kafka: prop('kafka.version'), debezium: prop('debezium.version') };
}

/** Paths of the fetched jars: Kafka + Connect on one classpath, Debezium in its own plugin folder. */
export interface Jars {
  classpath: string;
  pluginPath: string;
}

/** Fetches (once, into .stack/cache) Kafka, Connect and the Debezium connector from Maven Central with mvn. */
export function ensureJars(config: StackConfig, log: (line: string) => void): Jars {
  const versions = pinnedVersions();
  const cache = join(config.dir, 'cache', `kafka-${versions.kafka}-debezium-${versions.debezium}`);
  const libDir = join(cache, 'lib');
  const pluginPath = join(cache, 'plugins');
  const marker = join(cache, 'complete');
  if (!existsSync(marker)) {
    log(`fetching Kafka ${versions.kafka} and Debezium ${versions.debezium} jars with mvn (first run only)`);
    rmSync(cache, { recursive: true, force: true });
    mkdirSync(pluginPath, { recursive: true });
    const mvn = ['-B', '-q', '-f', POM];
    run('mvn', [
      ...mvn,
      'dependency:copy-dependencies',
      `-DoutputDirectory=${libDir}`,
      '-DincludeScope=runtime',
    ]);
    const download = join(cache, 'download');
    run('mvn', [
      ...mvn,
      'dependency:copy',
      `-Dartifact=io.debezium:debezium-connector-postgres:${versions.debezium}:tar.gz:plugin`,
      `-DoutputDirectory=${download}`,
    ]);
    for (const file of readdirSync(download)) run('tar', ['-xzf', join(download, file), '-C', pluginPath]);
    rmSync(download, { recursive: true, force: true });
    writeFileSync(marker, new Date().toISOString());
  }
  return { classpath: join(libDir, '*'), pluginPath };
}
