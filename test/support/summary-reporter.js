// A jest reporter that appends this run's counts to $AUTONODE_TEST_SUMMARY (one JSON line
// per jest invocation), so `npm test` can print one closing line for all of its runs.
'use strict';
const fs = require('node:fs');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const file = process.env.AUTONODE_TEST_SUMMARY;
    if (!file) return;
    const line = {
      passed: results.numPassedTests,
      failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
      skipped: results.numPendingTests + results.numTodoTests,
    };
    fs.appendFileSync(file, JSON.stringify(line) + '\n');
  }
}
module.exports = SummaryReporter;
