import { afterEach, describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MissingPrerequisite, requireJavac } from '../src/prerequisites';

describe('the JDK compiler the Connect agent is built with', () => {
  const saved = process.env.JAVA_HOME;
  const dirs: string[] = [];
  const javaHome = (withJavac: boolean) => {
    const dir = mkdtempSync(join(tmpdir(), 'java-home-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'bin'));
    for (const tool of withJavac ? ['java', 'javac'] : ['java']) {
      writeFileSync(join(dir, 'bin', tool), '#!/bin/sh\nexit 0\n');
      chmodSync(join(dir, 'bin', tool), 0o755);
    }
    return dir;
  };

  afterEach(() => {
    if (saved === undefined) delete process.env.JAVA_HOME;
    else process.env.JAVA_HOME = saved;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('given a JAVA_HOME with only a JRE, fails in one line that says to install a JDK', () => {
    process.env.JAVA_HOME = javaHome(false);

    assert.throws(
      () => requireJavac(),
      (e: unknown) => e instanceof MissingPrerequisite && /no javac.*openjdk-17-jdk-headless/.test(e.message),
    );
  });

  it('given a JAVA_HOME with javac, passes', () => {
    process.env.JAVA_HOME = javaHome(true);

    assert.doesNotThrow(() => requireJavac());
  });
});
