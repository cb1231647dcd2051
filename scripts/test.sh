#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite. Tests labelled `gpu` skip
# themselves where there is no device. Extra arguments go to ctest (e.g. -R Cli, -L cpu).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/build.sh
ctest --preset default "$@"
