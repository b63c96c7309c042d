// Test files in path order, as the node runner ran them: the integration specs share one stack, so a run
// must not depend on timings cached by the previous one.
const Sequencer = require('@jest/test-sequencer').default;

/** Sorts test files by path. */
class PathSequencer extends Sequencer {
  sort(tests) {
    return [...tests].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
}

module.exports = PathSequencer;
