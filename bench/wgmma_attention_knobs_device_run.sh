#!/usr/bin/env bash
# One device call for the last knobs of issue 12's wgmma attention path (dynamic persistence, P
# through shared memory, the planted mbarrier hang), from binaries staged on the build machine
# into $D/bin (attention_wgmma_gpu_test, tuning_gpu_test, swr-tune; stripped):
#   1. the GPU test of every knob value against the fp64 reference (odd S, causal, B>1, H>1,
#      fp16/bf16, poisoned outputs), through the runtime launcher;
#   2. compute-sanitizer racecheck and synccheck on one dynamic-persistence variant and one
#      P-in-shared-memory variant (first shape only; cubins from step 1's cache);
#   3. a small tune with a variant planted to deadlock on an mbarrier (recorded as a timeout);
#   4. the new knob values against their twins at B2 H16 S16384 D128 fp16, causal and not,
#      interleaved (attention_wgmma_gpu_test's NewKnobsAgainstTheirTwinsInterleaved).
# Each step has its own time limit and the whole call a budget; logs go to $OUT.
set -uo pipefail
D=${D:-.device/attn-12b}
OUT=${OUT:-/tmp/attn-12b-out}
mkdir -p "$OUT"
BIN=$(cd "$D/bin" && pwd)
export SWR_CACHE_DIR="$OUT/cubins" XDG_CACHE_HOME="$OUT/cache" HOME="$OUT/home"
export SWR_TUNE_PATH="$BIN/swr-tune"
mkdir -p "$HOME"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1

BUDGET=${BUDGET:-180}  # seconds for the whole call; no step runs past it
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS left=$((BUDGET - SECONDS))
  if ((left < 5)); then echo "$name skipped (budget)" | tee -a "$OUT/steps.txt"; return; fi
  ((limit > left)) && limit=$left
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - start))s" | tee -a "$OUT/steps.txt"
}

step gpu_test 60 "$BIN/attention_wgmma_gpu_test"
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/gpu_test.log" | tail -8

# Index 8 (dynamic, 2 WGs overlap + pingpong, f16 causal) and 10 (P in shared memory, 2 WGs
# overlap + pingpong, bf16 causal) of tests/generator/wgmma_variants.hpp.
FILTER='*sawtooth_dynamic_head_major_d128_f16_causal:*ov_pp_psm_cyclic_grid_head_major_d128_bf16_causal'
for tool in racecheck synccheck; do
  SWR_WGMMA_FIRST_SHAPE_ONLY=1 step "sanitizer_$tool" 35 compute-sanitizer --tool "$tool" \
    --print-limit 20 "$BIN/attention_wgmma_gpu_test" --gtest_filter="$FILTER"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|tests? ran|PASSED|FAILED" "$OUT/sanitizer_$tool.log" |
    tail -5
done

step planted_hang 50 "$BIN/tuning_gpu_test" --gtest_filter='*MbarrierHang*'
grep -E "planted hang|PASSED|FAILED|Failure" "$OUT/planted_hang.log" | tail -6

SWR_WGMMA_TWIN_TIMING=1 step twin_timing 70 "$BIN/attention_wgmma_gpu_test" \
  --gtest_filter='*NewKnobsAgainstTheirTwins*'
grep -E "twin|wgmma-|PASSED|FAILED|Failure" "$OUT/twin_timing.log" | tail -24
cat "$OUT/steps.txt"
