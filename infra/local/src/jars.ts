import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT, StackConfig } from './config';
import { requireJavac } from './prerequisites';
import { runAsync } from './processes';

const POM = join(REPO_ROOT, 'infra', 'local', 'pom.xml');
/** The Connect worker's Java agent (infra/connect-agent/README.md), built from source by the jars step. */
const AGENT_DIR = join(REPO_ROOT, 'infra', 'connect-agent');

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
  /** The Connect worker's -javaagent jar (infra/connect-agent). */
  connectAgent: string;
}

/** Where the jars of the pinned versions are cached (in the stack folder). */
function jarCache(config: StackConfig) {
  const versions = pinnedVersions();
  const cache = join(config.dir, 'cache', `kafka-${versions.kafka}-debezium-${versions.debezium}`);
  return {
    versions,
    cache,
    libDir: join(cache, 'lib'),
    pluginPath: join(cache, 'plugins'),
    marker: join(cache, 'complete'),
  };
}

/** Where the agent built from the current sources lives: a folder named by the hash of its pom and sources. */
function agentJar(config: StackConfig): string {
  const hash = createHash('sha256');
  const files = readdirSync(AGENT_DIR, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !e.name.endsWith('.md'))
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => !relative(AGENT_DIR, f).startsWith('target'))
    .sort();
  for (const file of files) hash.update(relative(AGENT_DIR, file)).update('\0').update(readFileSync(file));
  const dir = join(config.dir, 'cache', `connect-agent-${hash.digest('hex').slice(0, 12)}`);
  return join(dir, 'connect-agent.jar');
}

/** The jars already fetched into the stack folder (by `up`); throws when they were not. */
export function ensureJars(config: StackConfig, _log?: (line: string) => void): Jars {
  const { libDir, pluginPath, marker } = jarCache(config);
  if (!existsSync(marker))
    throw new Error(`the Kafka jars are not in ${dirname(marker)}: run npm run up first`);
  const connectAgent = agentJar(config);
  if (!existsSync(join(dirname(connectAgent), 'complete')))
    throw new Error(`the Connect agent is not built in ${dirname(connectAgent)}: run npm run up first`);
  return { classpath: join(libDir, '*'), pluginPath, connectAgent };
}

/** Files and bytes under a folder. */
function folderSize(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    files += 1;
    bytes += statSync(join(entry.parentPath, entry.name)).size;
  }
  return { files, bytes };
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * Fetches (once, into .stack/cache) Kafka, Connect and the Debezium connector from Maven Central with mvn,
 * saying what it fetched and how big it is; a no-op when they are there.
 */
export async function fetchJars(config: StackConfig, log: (line: string) => void): Promise<Jars> {
  const { versions, cache, libDir, pluginPath, marker } = jarCache(config);
  if (!existsSync(marker)) {
    const mvn = ['-B', '-q', '-f', POM];
    rmSync(cache, { recursive: true, force: true });
    mkdirSync(pluginPath, { recursive: true });
    let started = Date.now();
    log(`fetching the Kafka ${versions.kafka} and Connect jars with mvn into ${libDir} (first run only)`);
    await runAsync('mvn', [
      ...mvn,
      'dependency:copy-dependencies',
      `-DoutputDirectory=${libDir}`,
      '-DincludeScope=runtime',
    ]);
    const lib = folderSize(libDir);
    log(`fetched ${lib.files} jars, ${mb(lib.bytes)}, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    started = Date.now();
    log(`fetching the Debezium PostgreSQL connector ${versions.debezium} with mvn`);
    const download = join(cache, 'download');
    await runAsync('mvn', [
      ...mvn,
      'dependency:copy',
      `-Dartifact=io.debezium:debezium-connector-postgres:${versions.debezium}:tar.gz:plugin`,
      `-DoutputDirectory=${download}`,
    ]);
    const archive = folderSize(download);
    for (const file of readdirSync(download))
      await runAsync('tar', ['-xzf', join(download, file), '-C', pluginPath]);
    rmSync(download, { recursive: true, force: true });
    const plugin = folderSize(pluginPath);
    log(
      `fetched the Debezium connector, ${mb(archive.bytes)} (${plugin.files} files, ${mb(plugin.bytes)} unpacked), ` +
        `in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    writeFileSync(marker, new Date().toISOString());
  }
  const agent = agentJar(config);
  const built = join(dirname(agent), 'complete');
  if (!existsSync(built)) {
    requireJavac();
    const started = Date.now();
    log(`building the Connect agent (infra/connect-agent) with mvn into ${dirname(agent)}`);
    // The marker is written after Maven has put both the agent and Byte Buddy there: a build cut short is redone.
    await runAsync('mvn', [
      '-B',
      '-q',
      '-f',
      join(AGENT_DIR, 'pom.xml'),
      `-Dagent.out=${dirname(agent)}`,
      'package',
    ]);
    writeFileSync(built, new Date().toISOString());
    log(`built the Connect agent in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return ensureJars(config);
}
