#!/usr/bin/env bash
# The host-side probes of registers-and-host-2026-11-27 on a lent GPU, over a package staged by
# bench/backward_peers_device_run.sh stage build .device/peers (carry it and this folder).
#   POINTS="..." OUT=$OUT bash bench/archive/registers-and-host-2026-11-27/run.sh
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export SWR_PEER_POINTS="${POINTS:-4x32x4096x64-noncausal 2x16x16384x128-noncausal 1x8x8192x256-causal}"
OUT=$OUT bash .device/peers/run.sh tune > "$OUT/tune.txt" 2>&1
W=/tmp/swr-peers
export SWR_RUNTIME_LIBRARY=$PWD/.device/peers/lib/libswr_runtime.so SWR_CACHE_DIR=$W/cubins \
  HOME=$W/home SWR_DB= PYTHONPATH=$PWD/.device/peers/python PYTHONUNBUFFERED=1
bench=$PWD/.device/peers/bench
python3 "$here/host.py" "$bench" "$W/catalog.db" $SWR_PEER_POINTS > "$OUT/host.txt" 2>&1
python3 "$here/gaps.py" "$bench" "$W/catalog.db" 2x16x16384x128-noncausal 4x32x4096x64-noncausal \
  > "$OUT/gaps.txt" 2>&1
python3 "$here/host2.py" "$bench" "$W/catalog.db" 4x32x4096x64-noncausal > "$OUT/host2.txt" 2>&1
