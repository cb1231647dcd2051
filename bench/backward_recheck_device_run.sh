#!/usr/bin/env bash
# The wgmma attention backward rechecked on a lent H100/H200, in one device call:
#
#   bench/backward_recheck_device_run.sh stage [BUILD_DIR] [DEST]   # here (DEST: .device/recheck)
#   OUT=$OUT bash DEST/run.sh                                        # GPU machine
#
# A: compute-sanitizer racecheck and synccheck on the backward GPU test's wgmma cases (every knob
#    value of the wgmma kernel) and two mma.sync cases, the first shape of each
#    (SWR_BACKWARD_FIRST_SHAPE_ONLY=1), in parallel.
# B: the sawtooth Q walk of the wgmma kernel against its cyclic twin where a head's Q and dO
#    outgrow what the L2 keeps (B8 H1 S65536 D128 bf16), each persistence mode, with L2 counters;
#    the model's prediction of the same variants; bench/backward_sawtooth_twins.py's table.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [[ ${1:-} == stage ]]; then
  source "$here/device_steps.sh"
  stage_backward_run "${2:-build}" "${3:-.device/recheck}" "$0"
  exit 0
fi

OUT=${OUT:?OUT: where the results go}
W=$(mktemp -d /tmp/swr-recheck.XXXXXX)
mkdir -p "$W/logs" "$W/home"
export HOME=$W/home SWR_CACHE_DIR=$W/cubins SWR_DB=
STEPS=$W/steps.txt DEADLINE=${DEADLINE:-540}
source "$here/device_steps.sh"
BIN=$here/bin
SANITIZER=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -1)
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  cat "$here/COMMIT"
} > "$W/env.txt" 2>&1

# ---- A: sanitizers ---------------------------------------------------------------------------
filter='*bwd_wgmma_*:*bwd_m64n128w8s2_sawtooth_dynamic_head_major_det_d32_f16_causal:'
filter+='*bwd_m32n64w8s2_cyclic_grid_head_major_d256_bf16'
for tool in racecheck synccheck; do
  SWR_BACKWARD_FIRST_SHAPE_ONLY=1 step "backward $tool" 300 "$W/logs/backward-$tool.log" \
    "$SANITIZER" --tool "$tool" --print-limit 20 "$BIN/attention_backward_gpu_test" \
    --gtest_filter="$filter" &
done
wait
for log in "$W"/logs/backward-*.log; do
  echo "$(basename "$log"): $(grep -hE 'RACECHECK SUMMARY|ERROR SUMMARY' "$log" | tr '\n' ' ')" \
    "$(grep -hE '^\[  (PASSED|FAILED)  \]' "$log" | tr '\n' ' ')" >> "$STEPS"
done

# ---- B: sawtooth twins of the wgmma kernel ------------------------------------------------------
shape=(--family attention-backward --gpu auto --batch 8 --heads 1 --seq 65536 --head-dim 128
  --dtype bf16)
configs=()
for order in cyclic sawtooth; do
  for persistence in grid static dynamic; do
    configs+=(--config "bwd-wgmma-m64n128w8s2-$order-$persistence-head_major")
  done
done
step "wgmma twins tune" 200 "$W/logs/twins_tune.log" "$BIN/swr-tune" "${shape[@]}" \
  "${configs[@]}" --db "$W/twins.db" -j 16
"$BIN/swr-tune" model "${shape[@]/auto/h200}" --json > "$W/model.json" 2> "$W/logs/model.err"
step "twins table" 30 "$W/logs/twins_table.log" python3 "$here/backward_sawtooth_twins.py" \
  --db "$W/twins.db" --model "$W/model.json" --out "$W/sawtooth-twins-wgmma"
cp "$STEPS" "$W/env.txt" "$OUT/" 2>/dev/null
cp "$W"/sawtooth-twins-wgmma.* "$OUT/" 2>/dev/null
xz -c "$W/twins.db" > "$OUT/twins-wgmma.db.xz"
tar -C "$W" -czf "$OUT/logs.tar.gz" logs
cat "$STEPS"
cat "$W"/sawtooth-twins-wgmma.md 2>/dev/null
