#!/usr/bin/env bash
# Each failing point's top backward variants (by the H200 split tune's catalogs) in the training
# step beside FA4, one GPU per share of the points, all GPUs at once. Two calls on one machine:
#   call 1, carry [.device/peers, .device/sv, .device/fa4a]:  OUT=$OUT bash .device/sv/run.sh compile
#   call 2, carry [.device/peers, .device/sv, .device/fa4b]:  OUT=$OUT bash .device/sv/run.sh time
# Staged here: .device/peers from bench/backward_peers_device_run.sh stage; .device/sv this folder,
# ../step-variants-2026-11-27/{make_catalogs,step_variants}.py and sources/gpuN.db.xz, the split
# tune's catalogs (its tune.tar.gz, xz-compressed). MODES: step_variants.py's modes in turn.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
peers=$here/../peers
W=/tmp/sv
TOP=${TOP:-5}
# GPU g's points and the split tune catalog each came from (sources/gpuN.db.xz).
SHARES=("2x32x16384x64-noncausal=gpu0"
  "1x16x32768x128-causal=gpu3"
  "2x16x16384x128-noncausal=gpu2 1x16x32768x128-noncausal=gpu2"
  "2x16x16384x128-causal=gpu3")
export PYTHONUNBUFFERED=1 SWR_RUNTIME_LIBRARY=$peers/lib/libswr_runtime.so SWR_DB=
export SWR_BENCH=$peers/bench PYTHONPATH=$peers/python
mkdir -p "$W"
# On fewer than four GPUs, share g runs on GPU g % gpus, after the shares before it there.
gpus=$(nvidia-smi --list-gpus | wc -l)
on_gpu() { local gpu=$1 g; shift; for ((g = gpu; g < ${#SHARES[@]}; g += gpus)); do "$@" "$g"; done; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$OUT/cards.txt"
case ${1:?compile|time} in
  compile)
    mkdir -p /tmp/fa4 && cp "$here"/../fa4a/part.* /tmp/fa4/
    for g in 0 1 2 3; do xz -dc "$here/sources/gpu$g.db.xz" > "$W/gpu$g.db"; done
    compile_share() {
      local g=$1 p pairs=()
      for p in ${SHARES[g]}; do pairs+=("${p%%=*}=$W/${p#*=}.db"); done
      python3 "$here/make_catalogs.py" "$W/c$g" "$TOP" "${pairs[@]}"
      mkdir -p "$W/home$g"
      # The variants compiled by the tuner, 16 at a time, into the cache swr.torch reads.
      python3 "$here/tune_jobs.py" "$W/c$g/variants.json" | while IFS='|' read -r family opts configs; do
        CUDA_VISIBLE_DEVICES=$((g % gpus)) HOME=$W/home$g SWR_CACHE_DIR=$W/cubins \
          "$peers/bin/swr-tune" --family "$family" --gpu auto $opts $configs --counters none \
          --db "$W/scratch$g.db" -j 16 < /dev/null > "$W/precompile$g-$family.log" 2>&1
        echo "precompile share $g $family rc=$?"
      done
      CUDA_VISIBLE_DEVICES=$((g % gpus)) HOME=$W/home$g SWR_CACHE_DIR=$W/cubins \
        python3 "$here/step_variants.py" "$W/c$g/variants.json" --precompile > "$W/compile$g.log" 2>&1
    }
    for ((gpu = 0; gpu < gpus && gpu < ${#SHARES[@]}; ++gpu)); do on_gpu $gpu compile_share & done
    wait
    tail -n 5 "$W"/compile*.log ;;
  time)
    [[ -d /tmp/site/flash_attn ]] || cat /tmp/fa4/part.* "$here"/../fa4b/part.* | xz -d -T8 |
      (mkdir -p /tmp/site && tar -C /tmp/site -xf -)
    export PYTHONPATH=$PYTHONPATH:/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site
    time_share() {
      local g=$1 mode
      for mode in ${MODES:-step backward step}; do
        CUDA_VISIBLE_DEVICES=$((g % gpus)) HOME=$W/home$g SWR_CACHE_DIR=$W/cubins \
          python3 "$here/step_variants.py" "$W/c$g/variants.json" --mode "$mode" \
          --out "$W/out$g-$mode-$SECONDS.json" 2>&1 | grep -v "UserWarning\|exe_args"
      done > "$W/time$g.log" 2>&1
    }
    for ((gpu = 0; gpu < gpus && gpu < ${#SHARES[@]}; ++gpu)); do on_gpu $gpu time_share & done
    wait
    cat "$W"/time*.log
    (cd "$W" && tar -czf "$OUT/step-variants.tar.gz" time*.log out*.json c*/variants.json) ;;
esac
