import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { onPath } from './processes';

/** The java the stack runs: $JAVA_HOME/bin/java when JAVA_HOME is set (as Maven does), else the one on the PATH. */
export const javaCommand = (): string =>
  process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';

/** A missing tool, said in one line with what to install. */
export class MissingPrerequisite extends Error {}

const NEEDS: { command: string; install: string }[] = [
  { command: 'java', install: 'a Java 17 or newer JDK (Debian: apt-get install openjdk-17-jdk-headless)' },
  { command: 'mvn', install: 'Apache Maven (Debian: apt-get install maven)' },
  { command: 'redis-server', install: 'Redis (Debian: apt-get install redis-server)' },
  { command: 'tar', install: 'tar' },
];

/** Fails with one clear line for the first missing tool. */
export function checkPrerequisites(): void {
  for (const need of NEEDS) {
    if (!onPath(need.command))
      throw new MissingPrerequisite(
        `missing prerequisite: '${need.command}' is not on the PATH; install ${need.install}`,
      );
  }
  if (process.env.JAVA_HOME && !existsSync(javaCommand()))
    throw new MissingPrerequisite(`missing prerequisite: JAVA_HOME=${process.env.JAVA_HOME} has no bin/java`);
  const version = /version "(\d+)/.exec(
    spawnSync(javaCommand(), ['-version'], { encoding: 'utf8' }).stderr ?? '',
  );
  if (version && Number(version[1]) < 17) {
    throw new MissingPrerequisite(
      `missing prerequisite: Java ${version[1]} found, Java 17 or newer is needed`,
    );
  }
}

/**
 * Fails with one clear line when there is no JDK compiler: Maven needs one to build the Connect worker's agent
 * (infra/connect-agent). Checked only when the agent is to be built, not on every `up`.
 */
export function requireJavac(): void {
  const javac = process.env.JAVA_HOME
    ? existsSync(join(process.env.JAVA_HOME, 'bin', 'javac'))
    : onPath('javac');
  if (!javac)
    throw new MissingPrerequisite(
      'missing prerequisite: no javac, and the Connect agent is built from source; install a Java 17 or newer JDK ' +
        '(Debian: apt-get install openjdk-17-jdk-headless)',
    );
}
