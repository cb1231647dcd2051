#!/usr/bin/env bash
# Stages issue 18's device run (a 2xH200 host; it also runs, and says what it could not check, on
# one GPU) on the build machine: bash bench/tuning_at_scale/stage.sh [BUILD_DIR] [DEST]
# (DEST defaults to .device/tuning-at-scale), then on the GPU machine: cd DEST && OUT=... bash run.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-build}
dest=${2:-.device/tuning-at-scale}
rm -rf "$dest" && mkdir -p "$dest/bin"
cp "$build/swr-tune" "$dest/bin/" && strip "$dest/bin/swr-tune"
cp "$here"/{run.sh,check.py,speedup.sh,speedup_check.py,plan8.json} "$dest/"
du -sh "$dest"
