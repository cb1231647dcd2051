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

# stage_swr_package BUILD REPO DEST: on the build machine, the Python package as a device run
# imports it: DEST/lib/libswr_runtime.so and DEST/python/swr (the sources git tracks, and the
# untracked ones it does not ignore) with the compiled hot path built in BUILD.
stage_swr_package() {
  local build=$1 repo=$2 dest=$3
  mkdir -p "$dest/lib"
  strip -o "$dest/lib/libswr_runtime.so" "$build/lib/libswr_runtime.so"
  (cd "$repo" && git ls-files -co --exclude-standard python/swr) | grep -v '\.c$' |
    while read -r f; do mkdir -p "$dest/$(dirname "$f")" && cp "$repo/$f" "$dest/$f"; done
  cmake --build "$build" --target swr_hotpath_ext >/dev/null
  cp "$build/python/swr/_hotpath_ext.abi3.so" "$dest/python/swr/"
}

# stage_backward_run BUILD DEST SCRIPT: on the build machine, what a backward device run carries:
# DEST/bin (swr-tune and the backward GPU test, stripped), SCRIPT as DEST/run.sh, this file, the
# sawtooth twins' table and the commit they were built from.
stage_backward_run() {
  local build=$1 dest=$2 script=$3
  local repo
  repo=$(git -C "$(dirname "$script")" rev-parse --show-toplevel)
  rm -rf "$dest" && mkdir -p "$dest/bin"
  strip -o "$dest/bin/swr-tune" "$build/swr-tune"
  strip -o "$dest/bin/attention_backward_gpu_test" "$build/tests/gpu/attention_backward_gpu_test"
  cp "$repo/bench/backward_sawtooth_twins.py" "$repo/bench/backward_consumer_sync.py" \
    "$repo/bench/device_steps.sh" "$dest/"
  cp "$script" "$dest/run.sh"
  git -C "$repo" rev-parse HEAD > "$dest/COMMIT"
  du -sh "$dest"
}
