// Sums the per-run counts written by test/support/summary-reporter.js and prints one
// closing line, `tests: N passed, N failed, N skipped`, for everything `npm test` ran.
'use strict';
const fs = require('node:fs');
const lines = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const sum = (k) => lines.reduce((n, l) => n + l[k], 0);
console.log(`\ntests: ${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped`);
process.exitCode = sum('failed') > 0 || sum('passed') === 0 ? 1 : 0;
