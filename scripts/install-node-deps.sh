#!/usr/bin/env bash
# Installs the locked npm dependencies when node_modules is missing or older than the lock.
# The registry reachable here serves no macOS/Windows builds of optional native packages
# (@swc/core-darwin-*, …), so npm cannot record them in the lock and `npm ci` refuses it as
# out of sync; then install from the same lock with `npm install --no-save`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" != "--force" && -f node_modules/.package-lock.json && ! package-lock.json -nt node_modules/.package-lock.json ]]; then
  exit 0
fi
echo "[setup] installing npm dependencies from package-lock.json"
ci_err=$(mktemp)
trap 'rm -f "$ci_err"' EXIT
if ! npm ci --no-audit --no-fund 2>"$ci_err"; then
  grep -q "Missing: .* from lock file" "$ci_err" || { cat "$ci_err" >&2; exit 1; }
  echo "[setup] npm ci: the lock lacks other platforms' optional binaries; installing with npm install --no-save" >&2
  npm install --no-audit --no-fund --no-save
fi
