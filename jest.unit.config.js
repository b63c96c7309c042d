/** The unit specs of every project: no local stack (`npm run test:unit`). */
module.exports = require('./tools/jest/preset.js').rootConfig({ unit: true });
