#!/usr/bin/env bash
# Installs what is missing, configures with the `default` preset (build/) and builds: everything,
# or the targets named as arguments (e.g. scripts/build.sh swr-tune).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-dependencies.sh
cmake --preset default >/dev/null
if (($# > 0)); then
  cmake --build --preset default --target "$@"
else
  cmake --build --preset default
fi
