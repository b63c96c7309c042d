/** This project's unit specs and integration specs for jest (the shared settings: tools/jest/preset.js). */
module.exports = require('../../tools/jest/preset.js').projectConfig(__dirname);
