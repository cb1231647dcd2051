#!/usr/bin/env bash
# Issue 27's head to head on a lent H100/H200: swr's training step (forward with the log-sum-exp,
# then the tuned backward) against FlashAttention-4, cuDNN and FlashAttention-2, in two device
# calls on the same warm machine (FA4's wheels travel in two parts: ../shared/peers/fa4/pack.sh).
#
#   bench/backward_peers_device_run.sh stage [BUILD_DIR] [DEST]    # here (DEST: .device/peers)
#   call 1, carry [DEST, .device/fa4a]:  OUT=$OUT bash DEST/run.sh tune
#   call 2, carry [DEST, .device/fa4b]:  OUT=$OUT bash DEST/run.sh peers   (at once after call 1)
#           (ORDERS="balanced balanced" times the grid twice, one round after the other; the rounds
#            are numbered on over the calls of one machine: training_step-rN-ORDER.json.xz)
#   then, on the same machine:          OUT=$OUT bash DEST/run.sh repeat
#   on a machine of N GPUs:             OUT=$OUT bash DEST/run.sh split tune|peers
#           (GPU g takes points g, g + N, g + 2N, ..., all GPUs at once: each its own work folder,
#            catalog and results under $OUT/gpuG; a point is timed on one GPU)
#
# tune:  copies FA4's first part to /tmp; tunes the forward and the backward of every point with
#        --model-top 10 into /tmp/swr-peers/catalog.db (kept for call 2). On one GPU the grid's
#        tune outgrows a call: tune SWR_PEER_POINTS subsets in turn, and stage each call's catalog
#        (from its tune.tar.gz) as DEST/catalog.db before the next, which goes on from it where a
#        fresh machine has none (so does peers). SWR_PEER_PASSES=backward (or forward) tunes
#        that pass alone. (The whole backward space of one shape, timed:
#        bench/backward_ws_device_run.sh measure.)
# peers: unpacks FA4, runs bench/training_step.py on every point against the catalog (checks
#        every candidate's gradients first, then times them interleaved with the L2 flushed),
#        with the SM clock and power logged beside it.
# repeat: tunes the backward of every point again, the same way, into a second database
#        (/tmp/swr-peers/repeat.db): do two tunes pick the same variant, and time it alike?
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Issue 27's grid (bench/training_step.py's default points): S 4096 / 16384 / 32768 x D 64 / 128 x
# causal or not, GQA 32/8 at D128, and D256 causal and not.
POINTS=(4x32x4096x64-noncausal 4x32x4096x64-causal 4x16x4096x128-noncausal
  4x16x4096x128-causal 2x32x16384x64-noncausal 2x32x16384x64-causal 2x16x16384x128-noncausal
  2x16x16384x128-causal 1x32x32768x64-noncausal 1x32x32768x64-causal 1x16x32768x128-noncausal
  1x16x32768x128-causal 1x32x32768x128-kv8-causal 1x8x8192x256-causal 1x8x8192x256-noncausal)
# SWR_PEER_POINTS="..." in the environment: a subset of them (the same in both calls).
[[ -n ${SWR_PEER_POINTS:-} ]] && read -ra POINTS <<<"$SWR_PEER_POINTS"

if [[ ${1:-} == stage ]]; then
  build=${2:-build}
  dest=${3:-.device/peers}
  repo=$(git -C "$here" rev-parse --show-toplevel)
  rm -rf "$dest" && mkdir -p "$dest/bin" "$dest/bench"
  strip -o "$dest/bin/swr-tune" "$build/swr-tune"
  source "$here/device_steps.sh"
  stage_swr_package "$build" "$repo" "$dest"
  cp "$repo"/bench/{training_step,device_timing}.py "$dest/bench/"
  cp "$0" "$dest/run.sh" && cp "$here/device_steps.sh" "$dest/"
  git -C "$repo" rev-parse HEAD > "$dest/COMMIT"
  du -sh "$dest"
  exit 0
fi

OUT=${OUT:?OUT: where the results go}
mkdir -p "$OUT"
# SWR_GPU: the one GPU (its index) this run uses, by itself or as one share of `split`.
GPU=${SWR_GPU:-0}
export CUDA_VISIBLE_DEVICES=$GPU
W=/tmp/swr-peers${SWR_GPU:+-gpu$SWR_GPU}
mkdir -p "$W/logs" "$W/home"
export PYTHONUNBUFFERED=1 SWR_RUNTIME_LIBRARY=$here/lib/libswr_runtime.so
export SWR_CACHE_DIR=$W/cubins HOME=$W/home SWR_TUNE_PATH=$here/bin/swr-tune SWR_DB=
DEADLINE=${DEADLINE:-560}
source "$here/device_steps.sh"

# BxHxSxD[-kvN]-causal|noncausal -> swr-tune's shape options (bf16).
shape_options() {
  local dims=${1%%-*} rest=${1#*-} kv=
  IFS=x read -r b h s d <<<"$dims"
  [[ $rest == kv* ]] && kv=${rest%%-*} && kv=${kv#kv}
  echo "--batch $b --heads $h ${kv:+--kv-heads $kv} --seq $s --head-dim $d --dtype bf16" \
    "$([[ $1 == *-causal ]] && echo --causal)"
}

# The backward of every point with --model-top 10 into `db`.
tune_backward() {
  local db=$1 point shape
  for point in "${POINTS[@]}"; do
    read -ra shape <<<"$(shape_options "$point")"
    step "tune backward $point" 90 "$W/logs/tune_bwd_$point${2:-}.log" "$here/bin/swr-tune" \
      --family attention-backward --gpu auto "${shape[@]}" --model-top 10 --counters none \
      --db "$db" -j 16
  done
}

# FA4's first pack kept in /tmp/fa4 for call 2 (call 1 carries it), once a machine.
keep_fa4_first_pack() {
  ls /tmp/fa4/part.* >/dev/null 2>&1 || { mkdir -p /tmp/fa4 && cp .device/fa4a/part.* /tmp/fa4/ 2>/dev/null; }
}
# FA4 unpacked into /tmp/site from both packs, once a machine; fails where the first pack is gone.
unpack_fa4() {
  [[ -d /tmp/site/flash_attn ]] && return 0
  ls /tmp/fa4/part.* >/dev/null 2>&1 || return 1
  cat /tmp/fa4/part.* .device/fa4b/part.* | xz -d -T8 | (mkdir -p /tmp/site && tar -C /tmp/site -xf -)
}

if [[ ${1:-} == split ]]; then
  # FA4's packs are copied and unpacked once, before the GPUs' shares start.
  if [[ ${2:-} == tune ]]; then keep_fa4_first_pack; else unpack_fa4; fi
  gpus=$(nvidia-smi --list-gpus | wc -l)
  for ((gpu = 0; gpu < gpus; ++gpu)); do
    share=()
    for ((i = gpu; i < ${#POINTS[@]}; i += gpus)); do share+=("${POINTS[i]}"); done
    ((${#share[@]} > 0)) || continue
    mkdir -p "$OUT/gpu$gpu"
    SWR_GPU=$gpu SWR_PEER_POINTS="${share[*]}" OUT=$OUT/gpu$gpu bash "$0" "${2:?split tune|peers}" \
      > "$OUT/gpu$gpu/run.log" 2>&1 &
  done
  wait
  tail -n 40 "$OUT"/gpu*/run.log
  # One archive of every GPU's results: a device call brings back only a few files.
  tar -C "$OUT" -czf "$OUT/split-$2.tar.gz" $(cd "$OUT" && ls -d gpu*) && rm -rf "$OUT"/gpu*
  exit 0
fi

if [[ ${1:-} == repeat ]]; then
  STEPS=$W/steps-repeat.txt
  tune_backward "$W/repeat.db" -repeat
  cp "$STEPS" "$OUT/"
  (cd "$W" && tar -czf "$OUT/repeat.tar.gz" repeat.db logs/tune_bwd_*-repeat.log)
  cat "$STEPS"
  exit 0
fi

# A catalog staged beside this script (a tune call's, from its tune.tar.gz) stands in for the
# machine's where it has none (a fresh machine); under `split`, catalog-gpuG.db for GPU G where
# there is one (a split tune's own shares).
take_staged_catalog() {
  local staged=$here/catalog${SWR_GPU:+-gpu$SWR_GPU}.db
  [[ -f $staged ]] || staged=$here/catalog.db
  [[ -f $W/catalog.db || ! -f $staged ]] || cp "$staged" "$W/catalog.db"
}

if [[ ${1:-} == tune ]]; then
  # SWR_PEER_PASSES: the passes to tune (default both); `backward` alone where only its kernels
  # changed since the staged catalog's forward was tuned (the catalog staged without its backward
  # rows).
  passes=${SWR_PEER_PASSES:-forward backward}
  for pass in $passes; do
    [[ $pass == forward || $pass == backward ]] || {
      echo "$0: SWR_PEER_PASSES='$passes': '$pass' is not a pass (forward, backward or both)" >&2
      exit 2
    }
  done
  STEPS=$W/steps-tune.txt
  keep_fa4_first_pack
  take_staged_catalog
  {
    nvidia-smi -i "$GPU" --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
    cat "$here/COMMIT"
  } > "$W/env.txt" 2>&1
  if [[ " $passes " == *" forward "* ]]; then
    for point in "${POINTS[@]}"; do
      read -ra shape <<<"$(shape_options "$point")"
      step "tune forward $point" 60 "$W/logs/tune_fwd_$point.log" "$here/bin/swr-tune" --gpu auto \
        "${shape[@]}" --model-top 10 --counters none --db "$W/catalog.db" -j 16
    done
  fi
  [[ " $passes " == *" backward "* ]] && tune_backward "$W/catalog.db"
  "$here/bin/swr-tune" show --family attention-backward --gpu auto --db "$W/catalog.db" --json \
    > "$W/catalog_show.json" 2>&1
  cp "$STEPS" "$W/env.txt" "$OUT/"
  tar -C "$W" -czf "$OUT/tune.tar.gz" logs catalog_show.json catalog.db
  cat "$STEPS"
  exit 0
fi

if [[ ${1:-} == peers ]]; then
  STEPS=$W/steps-peers.txt
  if unpack_fa4; then
    export PYTHONPATH=/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site
  else
    echo "FA4's first part is gone (a fresh machine): FA4 not installed" >> "$STEPS"
  fi
  take_staged_catalog
  [[ -f $W/catalog.db ]] || { echo "no catalog: run the tune call first" >> "$STEPS"; cat "$STEPS"; exit 1; }
  cd "$here/bench" || exit 1
  # Rounds are numbered on from those already on this machine, so that no call overwrites another's
  # (ORDERS="balanced balanced" is two rounds); each round's files go to $OUT as soon as it ends.
  first=$(($(ls "$W"/logs/training_step-r*.log 2>/dev/null | wc -l) + 1))
  # The SM clock and power every 100 ms beside the runs (their `at` is the host's clock too).
  clocks_csv=$W/clocks-from-r$first.csv
  nvidia-smi -i "$GPU" --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active \
    --format=csv,noheader -lms 100 > "$clocks_csv" 2>&1 &
  clocks=$!
  # ORDERS: the round orders to run the grid in, one after the other (training_step.py --order).
  round=$first names=()
  for order in ${ORDERS:-balanced}; do
    name=training_step-r$round-$order && names+=("$name")
    step "round $round: training step, ${#POINTS[@]} points, $order order" 540 \
      "$W/logs/$name.log" env PYTHONPATH="$here/python:${PYTHONPATH:-}" \
      python3 training_step.py --points "${POINTS[@]}" --catalog "$W/catalog.db" \
      --order "$order" --out "$W/$name.json"
    xz -f "$W/$name.json"
    cp "$STEPS" "$W/logs/$name.log" "$W/$name.json.xz" "$OUT/" 2>/dev/null
    xz -c "$clocks_csv" > "$OUT/$(basename "$clocks_csv").xz"
    round=$((round + 1))
  done
  kill "$clocks" 2>/dev/null
  xz -c "$clocks_csv" > "$OUT/$(basename "$clocks_csv").xz"
  cat "$STEPS"
  for name in "${names[@]}"; do tail -17 "$W/logs/$name.log"; done
  exit 0
fi
echo "usage: $0 stage [BUILD_DIR] [DEST] | tune | peers | repeat" >&2
exit 2
