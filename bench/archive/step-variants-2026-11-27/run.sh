#!/usr/bin/env bash
# Two device calls on one warm machine (FA4's wheels travel in two parts):
#   call 1, carry [.device/variants, .device/fa4a]:  OUT=$OUT bash .device/variants/run.sh compile
#   call 2, carry [.device/variants, .device/fa4b]:  MODES="step backward sustained" OUT=$OUT bash .device/variants/run.sh time
# .device/variants: this folder's scripts, the tune catalogs in sources/ (gpuN.db, from a split
# tune of bench/backward_peers_device_run.sh) and lib/, python/, bench/ of its stage.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
peers=$here
W=/tmp/swr-variants
mkdir -p "$W/home"
export PYTHONUNBUFFERED=1 SWR_RUNTIME_LIBRARY=$peers/lib/libswr_runtime.so SWR_CACHE_DIR=$W/cubins
export HOME=$W/home SWR_DB= SWR_BENCH=$peers/bench
export PYTHONPATH=$peers/python
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/cards.txt"
case ${1:?compile|time} in
  compile)
    s=$here/sources
    python3 "$here/make_catalogs.py" "$W/catalogs" 4 2x16x16384x128-causal=$s/gpu3.db \
      1x16x32768x128-causal=$s/gpu3.db 2x32x16384x64-noncausal=$s/gpu0.db \
      1x32x32768x64-causal=$s/gpu1.db 2x16x16384x128-noncausal=$s/gpu2.db
    mkdir -p /tmp/fa4 && cp "$here"/../fa4a/part.* /tmp/fa4/
    python3 "$here/step_variants.py" "$W/catalogs/variants.json" --precompile 2>&1 | tail -20 ;;
  time)
    [[ -d /tmp/site/flash_attn ]] || cat /tmp/fa4/part.* "$here"/../fa4b/part.* | xz -d -T8 |
      (mkdir -p /tmp/site && tar -C /tmp/site -xf -)
    export PYTHONPATH=$PYTHONPATH:/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 100 \
      > "$W/clocks.csv" 2>&1 &
    clocks=$!
    for mode in ${MODES:-step}; do
      python3 "$here/step_variants.py" "$W/catalogs/variants.json" --mode "$mode" \
        --out "$OUT/step-variants-$mode.json" 2>&1 | grep -v "UserWarning\|exe_args"
    done
    kill $clocks
    xz -c "$W/clocks.csv" > "$OUT/clocks.csv.xz" ;;
esac
