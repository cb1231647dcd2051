#!/usr/bin/env bash
# The GPU test suite on a GPU machine, from binaries built on another (the GPU machine needs no
# compiler or development package):
#
#   scripts/gpu-suite.sh stage [BUILD_DIR] [DEST]   # build machine: every test program labelled
#                                                   # `gpu`, swr-tune and the examples, stripped,
#                                                   # into DEST/gpu-suite.tar.xz (DEST: .device/gpu-suite)
#   OUT=results/ scripts/gpu-suite.sh run [DEST]    # GPU machine: unpacks and runs each program,
#                                                   # then again against a stub libcuda that
#                                                   # cannot be used (check-unusable-driver.sh)
#
# Each program's output goes to $OUT/<program>.log and one PASS/FAIL line per program to stdout
# and $OUT/summary.txt; the exit code is 1 when any failed. Extra gtest flags: $GTEST_ARGS; each
# program may run $PROGRAM_TIMEOUT seconds (900).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."

mode=${1:-}
if [[ $mode == stage ]]; then
  build=${2:-build}
  dest=${3:-.device/gpu-suite}
  staging=$(mktemp -d)
  trap 'rm -rf "$staging"' EXIT
  mapfile -t programs < <(ctest --test-dir "$build" -L gpu -N -V 2>/dev/null |
    sed -n 's/^[0-9]*: Test command: \([^ ]*\).*/\1/p' | sort -u)
  for program in "${programs[@]}" "$build/swr-tune" "$build"/examples/swr_*_example; do
    [[ -x $program ]] || { echo "missing $program" >&2; exit 1; }
    cp "$program" "$staging/"
    strip "$staging/$(basename "$program")"
  done
  mkdir -p "$staging/stub-driver" "$dest"
  cp "$build/tests/stub-driver/libcuda.so.1" "$staging/stub-driver/"
  tar -C "$staging" -cJf "$dest/gpu-suite.tar.xz" .
  ls -l "$dest/gpu-suite.tar.xz"
  exit 0
fi
if [[ $mode != run ]]; then
  echo "usage: scripts/gpu-suite.sh stage [BUILD_DIR] [DEST] | run [DEST]" >&2
  exit 2
fi

dest=${2:-.device/gpu-suite}
OUT=${OUT:-gpu-suite-results}
mkdir -p "$OUT" "$dest/bin"
OUT=$(cd "$OUT" && pwd)
tar -C "$dest/bin" -xJf "$dest/gpu-suite.tar.xz"
BIN=$(cd "$dest/bin" && pwd)
# The test programs find these through the environment (their built-in paths are elsewhere).
export SWR_TUNE_PATH="$BIN/swr-tune" SWR_EXAMPLE_PATH="$BIN/swr_attention_example"
export SWR_GEMM_EXAMPLE_PATH="$BIN/swr_gemm_example" SWR_SOURCE_DIR="$PWD"
export SWR_CACHE_DIR="$OUT/cubins"
rm -f "$OUT/summary.txt"
failed=0
for program in "$BIN"/*_test; do
  name=$(basename "$program")
  if timeout "${PROGRAM_TIMEOUT:-900}" "$program" ${GTEST_ARGS:-} >"$OUT/$name.log" 2>&1; then
    echo "PASS $name ($(grep -o '\[  PASSED  \] [0-9]* test' "$OUT/$name.log" | grep -o '[0-9]*') passed, $(grep -c '\[  SKIPPED \]' "$OUT/$name.log") skipped lines)" | tee -a "$OUT/summary.txt"
  else
    echo "FAIL $name (exit $?, see $name.log)" | tee -a "$OUT/summary.txt"
    failed=1
  fi
done
# The same programs against a libcuda that loads but cannot be used must fail, not skip.
if [[ -z ${SKIP_UNUSABLE_DRIVER:-} ]]; then
  if "$here/check-unusable-driver.sh" "$BIN" "$BIN/stub-driver" >"$OUT/unusable-driver.log" 2>&1; then
    echo "PASS unusable driver: every GPU test program failed with the driver's reason" | tee -a "$OUT/summary.txt"
  else
    echo "FAIL unusable driver (see unusable-driver.log)" | tee -a "$OUT/summary.txt"
    failed=1
  fi
fi
exit $failed
