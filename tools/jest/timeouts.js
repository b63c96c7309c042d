// The default timeout of each test (a test's own third argument wins): jest reads `testTimeout` only from the
// config it was started with, not per project, so the unit and integration defaults are set here per file.
// `jest` is the module parameter jest gives every file it loads
const { expect } = require('@jest/globals');

// Integration specs wait on conditions with their own deadlines: generous. node:test had no default timeout;
// a unit test taking 30 s on a loaded machine is a bug.
/* global jest */
jest.setTimeout(/\.int-spec\.ts$/.test(expect.getState().testPath ?? '') ? 600_000 : 30_000);
