// jest's own runner, marked serial: jest runs the files of a serial runner one after the other in its main
// process, so the integration specs (which share one local stack) never overlap, while the unit specs of the
// same run still use every worker.
const TestRunner = require('jest-runner').default;

/** The default jest runner, one test file at a time. */
class SerialRunner extends TestRunner {
  isSerial = true;
}

module.exports = SerialRunner;
