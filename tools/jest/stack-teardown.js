// globalTeardown of every integration project: stops, once, what the run's globalSetup started.
/** Stops the parts this run started (however many int projects ran). */
module.exports = async function stackTeardown() {
  await globalThis.__checkoutStack?.stopStarted();
};
