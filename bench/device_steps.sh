# Sourced by the device-run scripts in bench/: one timed step of a run on a lent GPU machine.
#
#   step NAME SECONDS LOG COMMAND...
#
# runs COMMAND with its output in LOG for at most SECONDS, and never past $DEADLINE seconds of
# the script ($SECONDS); appends "NAME rc=.. Ns (at Ms)" to $STEPS (or says it was skipped) and
# returns COMMAND's exit code, so that one failing step never stops the run.
step() {
  local name=$1 limit=$2 log=$3 start=$SECONDS
  shift 3
  local left=$((${DEADLINE:?DEADLINE: seconds the script may take} - SECONDS))
  if ((left < 10)); then
    echo "$name skipped (deadline)" >> "${STEPS:?STEPS: the steps file}"
    return 1
  fi
  ((limit > left)) && limit=$left
  timeout -k 5 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - start))s (at ${SECONDS}s)" >> "$STEPS"
  return $rc
}
