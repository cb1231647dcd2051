#!/bin/bash
# Stages issue 17's two device folders (bench/model_transfer_device_run.sh) from this build:
#   bench/model_transfer_stage.sh DEST_ROOT          (e.g. /work/main/.device)
# writes DEST_ROOT/model-17-h200/ and DEST_ROOT/model-17-h100/, each: swr-tune (stripped), the run
# and summary scripts, the sm_90a cubins of every variant they run (cubins-sm90.tar.xz, taken from
# the cubin cache, $SWR_CACHE_DIR or the default, after compiling them there), and run.sh
# (`cd <folder> && bash run.sh`). Needs strace.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dest_root=${1:?usage: bench/model_transfer_stage.sh DEST_ROOT}
tune=$here/build/swr-tune
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
mkdir -p "$cache/cubins-sm90"
# Every kernel set the runs use, compiled through the cubin cache (NVRTC on this machine; cached
# entries are reused); the entries the compiles open (strace) are the ones carried.
trace() { strace -f -qq -e trace=openat -o "$cache/trace.$RANDOM" "$@" > /dev/null; }
for d in 64 128; do
  for causal in "" --causal; do
    keys=$("$tune" space --gpu h200 --batch 4 --seq 32768 --head-dim $d $causal --json |
      python3 -c 'import json, sys; print(" ".join("--config " + c["key"] for c in json.load(sys.stdin)["configs"] if "head_major" in c["key"]))')
    trace "$tune" compile --gpu h200 --batch 4 --seq 32768 --head-dim $d $causal $keys --json
  done
done
for binary in wgmma-m128n256k64s3-cooperative-c1x1-static-swz0 m128n256k64w2x4s3-grid-swz0; do
  trace "$tune" compile --family gemm --gpu h200 --size 4096 --config $binary
done
grep -ho '"[^"]*/[0-9a-f]\{64\}\.cubin"' "$cache"/trace.* | tr -d '"' | sort -u |
  while read -r cubin; do cp "$cubin" "$cache/cubins-sm90/"; done
echo "$(ls "$cache/cubins-sm90" | wc -l) cubins carried"
tar -C "$cache" -cJf "$cache/cubins-sm90.tar.xz" cubins-sm90
for gpu in h200 h100; do
  folder=$dest_root/model-17-$gpu
  mkdir -p "$folder"
  strip -o "$folder/swr-tune" "$tune"
  cp "$here/bench/model_transfer_device_run.sh" "$here/bench/model_transfer_summary.py" "$cache/cubins-sm90.tar.xz" "$folder/"
  printf '#!/bin/bash\n# Issue 17 on the %s (one call, ~5 minutes): see model_transfer_device_run.sh.\nGPU=%s exec bash "$(dirname "$0")/model_transfer_device_run.sh"\n' "$gpu" "$gpu" > "$folder/run.sh"
  (cd "$here" && git rev-parse HEAD) > "$folder/COMMIT"
  du -sh "$folder"
done
