#!/usr/bin/env bash
# The quick start: install what is missing, build, and run the main job, e.g.
#   scripts/setup-and-tune.sh --gpu gb10 --seq 131072
# Without the named GPU, swr-tune compiles the variant space for it and says that timing needs it.
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# == 0)); then
  echo "usage: scripts/setup-and-tune.sh --gpu GPU --seq S [swr-tune options]" >&2
  echo "e.g.:  scripts/setup-and-tune.sh --gpu gb10 --seq 131072" >&2
  exit 2
fi
scripts/build.sh swr-tune
exec build/swr-tune "$@"
