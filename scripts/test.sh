#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite. Tests labelled `gpu` skip
# themselves where there is no device. Extra arguments go to ctest (e.g. -R Cli, -L cpu).
# Then the fuzz targets run for SWR_FUZZ_SECONDS each (default 60; 0 skips them), from their
# seed corpus, under AddressSanitizer and UndefinedBehaviorSanitizer (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# ccache (installed by scripts/install-dependencies.sh) for a first configure of build/ and for the
# wheel that python_package_install builds from a copy of the tree: the second build compiles the
# same sources with the same flags, so it comes from the cache.
scripts/install-dependencies.sh
if command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
  # Paths below the repository are hashed relative to the compiler's directory, so that the
  # copy's build (same layout) finds the build tree's objects.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
fi
scripts/build.sh
# A failed test's output scrolls by among 1,100 tests; where it failed, the end of each failed
# test's output is printed again after the summary, where a reader of the last lines looks.
ctest_status=0
rm -f build/Testing/Temporary/LastTestsFailed.log  # ctest leaves an earlier run's in place
ctest --preset default "$@" || ctest_status=$?
if ((ctest_status != 0)); then
  log=build/Testing/Temporary/LastTest.log
  for name in $(cut -d: -f2- build/Testing/Temporary/LastTestsFailed.log 2>/dev/null); do
    echo "=== the last 40 lines of $name's output ($log) ==="
    awk -v name="$name" '/^[0-9]+\/[0-9]+ Testing: / && substr($0, index($0, ": ") + 2) == name {
      found = 1; next } found && /^<end of output>$/ {exit} found' "$log" | tail -40
  done
  exit "$ctest_status"
fi

fuzz_seconds=${SWR_FUZZ_SECONDS:-60}
if [[ $fuzz_seconds != 0 ]]; then
  scripts/fuzz.sh "$fuzz_seconds"
fi
