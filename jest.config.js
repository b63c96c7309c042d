/** The whole suite: every project's unit and integration specs, one local stack for the run (tools/jest). */
module.exports = require('./tools/jest/preset.js').rootConfig();
