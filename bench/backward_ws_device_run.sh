#!/usr/bin/env bash
# The warp-specialized wgmma attention backward (templates/attention/backward/sm90/
# backward_kernel_ws.cuh) checked and measured on a lent H100/H200, in two device calls:
#
#   bench/backward_ws_device_run.sh stage [BUILD_DIR] [DEST]   # here (DEST: .device/ws)
#   OUT=$OUT bash DEST/run.sh check      # GPU machine: A and B
#   OUT=$OUT bash DEST/run.sh measure    # GPU machine: C and D
#   OUT=$OUT bash DEST/run.sh wide       # GPU machine: E
#   OUT=$OUT bash DEST/run.sh sync       # GPU machine: F
#
# A: the whole backward GPU test (every knob value of both wgmma kernels and of mma.sync).
# B: compute-sanitizer racecheck and synccheck on the backward GPU test's warp-specialized cases
#    (every knob value of the kernel), the first shape of each (SWR_BACKWARD_FIRST_SHAPE_ONLY=1).
# C: the whole backward space of B2 H16 S16384 D128 bf16 non-causal tuned into a fresh database
#    with L2 counters (issue 27: under 5 minutes), then the warp-specialized kernel's schedule
#    knobs at the other issue-27 shapes (timing only); `swr-tune show --json` of each.
# D: the sawtooth Q walk against its cyclic twin where a head's Q and dO outgrow what the L2 keeps
#    (B8 H1 S65536 D128 bf16), each persistence mode, with L2 counters, beside the model's
#    prediction (bench/backward_sawtooth_twins.py).
# E: the whole backward space (mma.sync and the wide-head wgmma kernel) of issue 27's head dim 256
#    points, B1 H8 S8192 bf16 causal and not, tuned into a fresh database (timing only).
# F: the consumers' two syncs (lockstep, lagged) of four schedules at eight of issue 27's D64/128
#    points, ROUNDS rounds (default 2) into a fresh database each, the syncs' order swapped every
#    round (timing only); bench/backward_consumer_sync.py's table of them.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [[ ${1:-} == stage ]]; then
  source "$here/device_steps.sh"
  stage_backward_run "${2:-build}" "${3:-.device/ws}" "$0"
  exit 0
fi

OUT=${OUT:?OUT: where the results go}
W=$(mktemp -d /tmp/swr-ws.XXXXXX)
mkdir -p "$W/logs" "$W/home"
export HOME=$W/home SWR_CACHE_DIR=$W/cubins SWR_DB=
STEPS=$W/steps.txt DEADLINE=${DEADLINE:-560}
source "$here/device_steps.sh"
BIN=$here/bin
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  cat "$here/COMMIT"
} > "$W/env.txt" 2>&1

if [[ ${1:-} == check ]]; then
  # TESTED: the GPU test's cases (default all); SANITIZED: the cases the sanitizers run (default
  # every warp-specialized one); the limits in seconds: TEST_SECONDS, SANITIZER_SECONDS.
  step "backward GPU test" "${TEST_SECONDS:-300}" "$W/logs/backward-gpu-test.log" \
    "$BIN/attention_backward_gpu_test" --gtest_filter="${TESTED:-*}"
  SANITIZER=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -1)
  for tool in racecheck synccheck; do
    SWR_BACKWARD_FIRST_SHAPE_ONLY=1 step "backward $tool" "${SANITIZER_SECONDS:-240}" \
      "$W/logs/backward-$tool.log" "$SANITIZER" --tool "$tool" --print-limit 20 \
      "$BIN/attention_backward_gpu_test" --gtest_filter="${SANITIZED:-*w12*}" &
  done
  wait
  for log in "$W"/logs/*.log; do
    echo "$(basename "$log"): $(grep -hE 'RACECHECK SUMMARY|ERROR SUMMARY' "$log" | tr '\n' ' ')" \
      "$(grep -hE '^\[  (PASSED|FAILED)  \]|^\[  SKIPPED \] [0-9]' "$log" | tr '\n' ' ')" >> "$STEPS"
  done
  cp "$STEPS" "$W/env.txt" "$W"/logs/*.log "$OUT/" 2>/dev/null
  cat "$STEPS"
  exit 0
fi

if [[ ${1:-} == measure ]]; then
  BIG=(--family attention-backward --gpu auto --batch 2 --heads 16 --seq 16384 --head-dim 128
    --dtype bf16)
  step "full backward tune d128 s16384" 300 "$W/logs/full_tune.log" "$BIN/swr-tune" "${BIG[@]}" \
    --db "$W/full.db" -j 16
  "$BIN/swr-tune" show "${BIG[@]}" --db "$W/full.db" --json > "$W/full-show.json" 2>&1
  # The schedule knobs of the warp-specialized tile at the issue's other shapes (timing only).
  knobs() {  # knobs BLOCK_M: every order x persistence x swizzle x dQ mode on the base tile
    for order in cyclic sawtooth; do
      for persistence in grid static dynamic; do
        for swizzle in head_major heads_interleaved; do
          for dq in "" -det; do
            echo --config "bwd-wgmma-m$1n128w12s2-$order-$persistence-$swizzle$dq"
          done
        done
      done
    done
  }
  for shape in "--seq 16384 --head-dim 128 --batch 2 --heads 16 --causal" \
    "--seq 16384 --head-dim 64 --batch 2 --heads 32" "--seq 4096 --head-dim 64 --batch 4 --heads 32 --causal"; do
    read -ra dims <<<"$shape"
    [[ $shape == *"--head-dim 128"* ]] && m=64 || m=128
    read -ra configs <<<"$(knobs $m | tr '\n' ' ')"
    name=$(echo "$shape" | tr -d ' -')
    step "knobs $name" 150 "$W/logs/knobs_$name.log" "$BIN/swr-tune" --family attention-backward \
      --gpu auto "${dims[@]}" --dtype bf16 "${configs[@]}" --counters none --db "$W/knobs.db" -j 16
    "$BIN/swr-tune" show --family attention-backward --gpu auto "${dims[@]}" --dtype bf16 \
      --db "$W/knobs.db" --json > "$W/knobs-$name.json" 2>&1
  done
  TWIN=(--family attention-backward --gpu auto --batch 8 --heads 1 --seq 65536 --head-dim 128
    --dtype bf16)
  twins=()
  for order in cyclic sawtooth; do
    for persistence in grid static dynamic; do
      twins+=(--config "bwd-wgmma-m64n128w12s2-$order-$persistence-head_major")
    done
  done
  step "ws twins tune" 150 "$W/logs/twins_tune.log" "$BIN/swr-tune" "${TWIN[@]}" "${twins[@]}" \
    --db "$W/twins.db" -j 16
  "$BIN/swr-tune" model "${TWIN[@]/auto/h200}" --json > "$W/model.json" 2> "$W/logs/model.err"
  step "twins table" 30 "$W/logs/twins_table.log" python3 "$here/backward_sawtooth_twins.py" \
    --db "$W/twins.db" --model "$W/model.json" --out "$W/sawtooth-twins-ws"
  cp "$STEPS" "$W/env.txt" "$W"/sawtooth-twins-ws.md "$OUT/" 2>/dev/null
  # One archive: the device call returns a limited number of files.
  for db in full knobs twins; do xz "$W/$db.db"; done
  (cd "$W" && tar -cJf "$OUT/measure.tar.xz" logs ./*.json ./*.db.xz 2>/dev/null)
  cat "$STEPS"
  tail -30 "$W/logs/full_tune.log"
  cat "$W"/sawtooth-twins-ws.md 2>/dev/null
  exit 0
fi
if [[ ${1:-} == wide ]]; then
  for mask in "" --causal; do
    WIDE=(--family attention-backward --gpu auto --batch 1 --heads 8 --seq 8192 --head-dim 256
      --dtype bf16 $mask)
    name=d256${mask:+-causal}
    step "backward space $name" 200 "$W/logs/wide_$name.log" "$BIN/swr-tune" "${WIDE[@]}" \
      --counters none --db "$W/wide.db" -j 16
    "$BIN/swr-tune" show "${WIDE[@]}" --db "$W/wide.db" --json > "$W/wide-$name.json" 2>&1
  done
  cp "$STEPS" "$W/env.txt" "$W"/wide-*.json "$OUT/" 2>/dev/null
  cat "$STEPS"
  for log in "$W"/logs/wide_*.log; do tail -14 "$log"; done
  exit 0
fi
if [[ ${1:-} == sync ]]; then
  shapes=("--batch 2 --heads 16 --seq 16384 --head-dim 128"
    "--batch 2 --heads 16 --seq 16384 --head-dim 128 --causal"
    "--batch 1 --heads 16 --seq 32768 --head-dim 128 --causal"
    "--batch 1 --heads 32 --kv-heads 8 --seq 32768 --head-dim 128 --causal"
    "--batch 2 --heads 32 --seq 16384 --head-dim 64"
    "--batch 2 --heads 32 --seq 16384 --head-dim 64 --causal"
    "--batch 1 --heads 32 --seq 32768 --head-dim 64"
    "--batch 4 --heads 32 --seq 4096 --head-dim 64 --causal")
  for round in $(seq 1 "${ROUNDS:-2}"); do
    for shape in "${shapes[@]}"; do
      read -ra dims <<<"$shape"
      [[ $shape == *"--head-dim 128"* ]] && m=64 || m=128
      configs=()
      for schedule in cyclic-grid cyclic-dynamic sawtooth-static sawtooth-dynamic; do
        lockstep=bwd-wgmma-m${m}n128w12s2-$schedule-head_major
        if ((round % 2)); then
          configs+=(--config "$lockstep" --config "$lockstep-lag")
        else
          configs+=(--config "$lockstep-lag" --config "$lockstep")
        fi
      done
      name=$(echo "$shape" | tr -d ' -')
      step "sync round $round $name" 120 "$W/logs/sync_${round}_$name.log" "$BIN/swr-tune" \
        --family attention-backward --gpu auto "${dims[@]}" --dtype bf16 "${configs[@]}" \
        --counters none --db "$W/sync-$round.db" -j 16
      "$BIN/swr-tune" show --family attention-backward --gpu auto "${dims[@]}" --dtype bf16 \
        --db "$W/sync-$round.db" --json > "$W/sync-$round-$name.json" 2>&1
    done
  done
  python3 "$here/backward_consumer_sync.py" "$W"/sync-*.json --json "$W/consumer-sync.json" \
    > "$W/consumer-sync.txt" 2>&1
  (cd "$W" && tar -cJf "$OUT/sync.tar.xz" logs ./sync-*.json)
  cp "$STEPS" "$W/env.txt" "$W/consumer-sync.txt" "$W/consumer-sync.json" "$OUT/" 2>/dev/null
  cat "$STEPS" "$W/consumer-sync.txt"
  exit 0
fi
echo "usage: $0 stage [BUILD_DIR] [DEST] | check | measure | wide | sync" >&2
exit 2
