#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite. Tests labelled `gpu` skip
# themselves where there is no device. Extra arguments go to ctest (e.g. -R Cli, -L cpu).
# Then the fuzz targets run for SWR_FUZZ_SECONDS each (default 60; 0 skips them), from their
# seed corpus, under AddressSanitizer and UndefinedBehaviorSanitizer (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh
ctest --preset default "$@"

fuzz_seconds=${SWR_FUZZ_SECONDS:-60}
if [[ $fuzz_seconds != 0 ]]; then
  scripts/fuzz.sh "$fuzz_seconds"
fi
