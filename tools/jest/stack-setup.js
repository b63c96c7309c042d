// globalSetup of every integration project: starts the local stack once per jest run through infra/local's
// API, which reuses only this checkout's parts. Every int project names this file; the first call does the
// work, the others see the mark on globalThis, which jest shares with globalTeardown.
const { bringUp, down, stopParts } = require('@checkout/local-stack');

const log = (line) => process.stdout.write(`[stack] ${line}\n`);

/** Stops what this run started (in CI, the whole stack), once, whatever ends the run. */
function stopStarted(stack) {
  stack.stopping ??= (async () => {
    if (process.env.STACK_KEEP === 'true') return;
    if (process.env.CI === 'true') await down(log);
    else if (stack.started.length) await stopParts(stack.started, log);
  })();
  return stack.stopping;
}

/** Starts the local stack unless this run already did; a signal from here on stops what it started. */
module.exports = async function stackSetup() {
  if (globalThis.__checkoutStack) return;
  const stack = { started: [], stopStarted: () => stopStarted(stack) };
  globalThis.__checkoutStack = stack;
  // An interrupted bringUp stops what it started itself, then ends the process with the signal.
  ({ started: stack.started } = await bringUp({ log }));
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: stopping what this test run started\n`);
      void stack.stopStarted().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
};
