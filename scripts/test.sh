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
ctest --preset default "$@"

fuzz_seconds=${SWR_FUZZ_SECONDS:-60}
if [[ $fuzz_seconds != 0 ]]; then
  scripts/fuzz.sh "$fuzz_seconds"
fi
