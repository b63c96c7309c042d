import { spawnSync } from 'node:child_process';
import { onPath } from './processes';

/** A missing tool, said in one line with what to install. */
export class MissingPrerequisite extends Error {}

const NEEDS: { command: string; install: string }[] = [
  { command: 'java', install: 'Java 17 or newer (Debian: apt-get install openjdk-17-jre-headless)' },
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
  const version = /version "(\d+)/.exec(spawnSync('java', ['-version'], { encoding: 'utf8' }).stderr ?? '');
  if (version && Number(version[1]) < 17) {
    throw new MissingPrerequisite(
      `missing prerequisite: Java ${version[1]} found, Java 17 or newer is needed`,
    );
  }
}
