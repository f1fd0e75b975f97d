#!/usr/bin/env bash
# `npm run record:histories [-- <fixture>... | all]`: records the workflow histories that
# test/unit/replay.test.ts replays (test/fixtures/histories/<fixture>.json) from real runs —
# on the local stack (integration tests) or on Temporal's time-skipping server with scripted
# activities (workflow tests, *-timeskipping): the test that drives each path writes its
# fixture when AUTONODE_RECORD_HISTORY names it (test/support/histories.ts recordHistory).
#
#   no argument   the fixtures below that are not committed yet (a new path's first recording)
#   <fixture>...  those, recorded again: only after a deliberate, patched() change — the old
#                 recording is what proves runs started before the change still replay, so
#                 prefer adding a fixture under a new name to overwriting one
#   all           every fixture below
#
# Not listed, never re-recorded: nodeclaim-v1-happy-path (the first nodeclaim shape, replayed
# through its frozen code), watch-gc-failures-before-patch and provisioner-batches (recorded
# from the code before patched('surface-gc-failures') and patched('plan-then-create')).
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A file_of=(
  [nodeclaim-happy-path]=nodeclaim-lifecycle
  [nodeclaim-partial-ice]=provisioner
  [provisioner-partial-ice]=provisioner
  [provisioner-plan-then-create]=provisioner
  [watch-with-gc]=watch
  [watch-gc-failures]=watch
  [disruption-emptiness]=disruption
  [disruption-drift-replace]=disruption
  [disruption-consolidation-delete]=disruption
  [disruption-many-to-many]=disruption
  [enablement-teardown]=enablement-gate
  [management-watch-gate-changes]=enablement-gate
  [interruption-replace-first]=interruption
  # from the workflow tests on Temporal's time-skipping server (activities scripted)
  [disruption-command-timeskipping]=workflow/disruption
  [disruption-many-to-many-timeskipping]=workflow/disruption
  [enablement-lifetime-timeskipping]=workflow/enablement-token
  [enablement-teardown-only-timeskipping]=workflow/enablement-teardown
  [management-watch-gate-change-timeskipping]=workflow/management-watch
  [enablement-interruption-queue-timeskipping]=workflow/interruption
)
dir=test/fixtures/histories

wanted=()
if [[ $# -eq 0 ]]; then
  for f in "${!file_of[@]}"; do [[ -f "$dir/$f.json" ]] || wanted+=("$f"); done
  if [[ ${#wanted[@]} -eq 0 ]]; then echo "[record] every fixture is committed; name the ones to record again, or 'all'"; exit 0; fi
elif [[ $# -eq 1 && $1 == all ]]; then
  wanted=("${!file_of[@]}")
else
  for f in "$@"; do
    f=${f%.json}
    if [[ -z ${file_of[$f]+x} ]]; then
      echo "[record] unknown fixture '$f': one of ${!file_of[*]} (or 'all')" >&2
      exit 2
    fi
    wanted+=("$f")
  done
fi

mapfile -t sorted < <(printf '%s\n' "${wanted[@]}" | sort)
integration=()
workflow=()
for f in "${sorted[@]}"; do
  case ${file_of[$f]} in
    workflow/*) workflow+=("test/${file_of[$f]}.test.ts") ;;
    *) integration+=("test/integration/${file_of[$f]}.test.ts") ;;
  esac
done
names=$(IFS=,; echo "${sorted[*]}")

echo "[record] ${sorted[*]}"
marker=$(mktemp)
trap 'rm -f "$marker"' EXIT
bash scripts/setup.sh
if [[ ${#workflow[@]} -gt 0 ]]; then
  mapfile -t workflow < <(printf '%s\n' "${workflow[@]}" | sort -u)
  AUTONODE_RECORD_HISTORY="$names" npx jest --selectProjects workflow --runInBand "${workflow[@]}"
fi
if [[ ${#integration[@]} -gt 0 ]]; then
  mapfile -t integration < <(printf '%s\n' "${integration[@]}" | sort -u)
  AUTONODE_RECORD_HISTORY="$names" npx jest --selectProjects integration --runInBand --forceExit "${integration[@]}"
fi

# a test that passed without reaching its recordHistory call wrote nothing: say so
missing=()
for f in "${sorted[@]}"; do [[ "$dir/$f.json" -nt "$marker" ]] || missing+=("$f"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "[record] not written: ${missing[*]}" >&2
  exit 1
fi
echo "[record] replaying every committed history against today's workflow code"
npx jest --selectProjects unit --runTestsByPath test/unit/replay.test.ts
