#!/usr/bin/env bash
# Run one row of the Missci table and record how it was made: results/<name>/row.json gets the command line,
# its start time and wall-clock seconds (python -m missci.report prints both next to the row's metrics).
#   scripts/timed_row.sh RESULTS_DIR -- COMMAND [ARG...]
set -euo pipefail
if [[ $# -lt 3 || $2 != "--" ]]; then
  echo "usage: $0 RESULTS_DIR -- COMMAND [ARG...]" >&2
  exit 2
fi
dir=$1
shift 2
mkdir -p "$dir"
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
start=$(date +%s)
status=0
"$@" || status=$?
seconds=$(( $(date +%s) - start ))
PYTHON=${PYTHON:-python}
"$PYTHON" - "$dir/row.json" "$started" "$seconds" "$status" "$@" <<'PY'
import json, shlex, sys
path, started, seconds, status, *command = sys.argv[1:]
with open(path, "w", encoding="utf-8") as out:
    json.dump({"command": shlex.join(command), "started": started, "seconds": int(seconds),
               "exit_status": int(status)}, out, indent=2)
    out.write("\n")
PY
exit "$status"
