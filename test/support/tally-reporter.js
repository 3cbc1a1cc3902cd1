/**
 * Jest reporter that closes a run with one plain line, `Tests: N passed, N failed, N skipped`, and,
 * when CI_TEST_TALLY names a file, appends the run's numbers to it so that .ci/run can close with
 * the total of all its suites.
 */
const { appendFileSync } = require('node:fs');

class TallyReporter {
  onRunComplete(_contexts, results) {
    const passed = results.numPassedTests;
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    if (process.env.CI_TEST_TALLY) appendFileSync(process.env.CI_TEST_TALLY, `${passed} ${failed} ${skipped}\n`);
  }
}

module.exports = TallyReporter;
