#!/usr/bin/env bash
# `npm test`: everything, including the local stack's setup when something is missing.
# Unit tests need only Node; integration tests run against the real local stack, which
# their global setup starts once and stops at the end (also on failure or Ctrl-C).
set -euo pipefail
cd "$(dirname "$0")/.."
summary_file=$(mktemp)
export AUTONODE_TEST_SUMMARY="$summary_file"
trap 'rm -f "$summary_file"' EXIT

bash scripts/setup.sh
echo "[test] typecheck"; npx tsc -p tsconfig.json --noEmit
echo "[test] lint"; npx eslint .
echo "[test] unit"; npx jest --selectProjects unit
echo "[test] workflow (time-skipping)"; npx jest --selectProjects workflow --runInBand
# --forceExit: the Temporal native runtime keeps a handle open after teardown
# (sdk-typescript#928); the stack itself is stopped by the global teardown first.
echo "[test] integration"; npx jest --selectProjects integration --runInBand --forceExit
node scripts/test-summary.js "$summary_file"
