#!/usr/bin/env bash
# One device call for the wgmma attention path (issue 12), from binaries staged on the build
# machine into $D (default .device/a12): the GPU test of every new knob value through the
# runtime launcher, racecheck + synccheck on one variant per consumer mode, a tune of the issue's
# shapes through swr-tune with a chosen key list (both paths), then swr (the runtime's choice,
# launched by libswr_runtime.so) against cuDNN and FA2, interleaved (bench/attention_vs_pytorch.py).
# Each step has its own timeout; results go to $OUT.
set -uo pipefail
D=${D:-.device/a12}
OUT=${OUT:-/tmp/a12-out}
mkdir -p "$OUT"
BIN=$(cd "$D/bin" && pwd)
export SWR_CACHE_DIR="$OUT/cubins" XDG_CACHE_HOME="$OUT/cache" HOME="$OUT/home"
mkdir -p "$HOME"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1

BUDGET=${BUDGET:-330}  # seconds for the whole call; no step runs past it
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS left=$((BUDGET - SECONDS))
  if ((left < 5)); then echo "$name skipped (budget)" | tee -a "$OUT/steps.txt"; return; fi
  ((limit > left)) && limit=$left
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - start))s" | tee -a "$OUT/steps.txt"
}

step gpu_test 80 "$BIN/attention_wgmma_gpu_test"
tail -5 "$OUT/gpu_test.log"
# One variant per consumer mode: 2 WGs overlap+pingpong, 2 WGs plain, 3 WGs.
FILTER='EveryKnob/WgmmaOnGpu.MatchesReferenceThroughTheLauncher/0:EveryKnob/WgmmaOnGpu.MatchesReferenceThroughTheLauncher/4:EveryKnob/WgmmaOnGpu.MatchesReferenceThroughTheLauncher/2'
for tool in racecheck synccheck; do
  step "sanitizer_$tool" 40 compute-sanitizer --tool "$tool" --print-limit 20 \
    "$BIN/attention_wgmma_gpu_test" --gtest_filter="$FILTER"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$OUT/sanitizer_$tool.log" | tail -4
done

DB="$OUT/results.db"
K128=(wgmma-m128n128s2-ov-pp-cyclic-grid-head_major wgmma-m128n176s2-ov-pp-cyclic-grid-head_major
      wgmma-m128n160s2-ov-pp-cyclic-grid-head_major wgmma-m128n128s2-ov-cyclic-grid-head_major
      wgmma-m128n176s2-ov-cyclic-grid-head_major wgmma-m128n128s2-ov-pp-cyclic-static-head_major
      wgmma-m128n128s2-ov-pp-sawtooth-grid-head_major m128n128w8s2-cyclic-grid-head_major
      m128n64w4s2-cyclic-grid-head_major)
K64=(wgmma-m192n192s2-cyclic-grid-head_major wgmma-m192n160s2-cyclic-grid-head_major
     wgmma-m192n128s2-ov-cyclic-grid-head_major wgmma-m128n192s2-ov-pp-cyclic-grid-head_major
     wgmma-m128n128s2-ov-pp-cyclic-grid-head_major wgmma-m192n192s3-cyclic-grid-head_major
     m128n128w8s2-cyclic-grid-head_major m128n64w4s2-cyclic-grid-head_major)
for shape in "8 16 4096" "2 16 16384"; do
  read -r b h s <<< "$shape"
  for d in 128 64; do
    if [[ $d == 128 ]]; then keys=("${K128[@]}"); else keys=("${K64[@]}"); fi
    args=(); for k in "${keys[@]}"; do args+=(--config "$k"); done
    step "tune_b${b}_h${h}_s${s}_d${d}" 45 "$BIN/swr-tune" --gpu h200 --batch "$b" --heads "$h" \
      --seq "$s" --head-dim "$d" --both --db "$DB" "${args[@]}"
  done
done
step show 10 "$BIN/swr-tune" show --gpu h200 --db "$DB"
step show_b2_s16384_d128 10 "$BIN/swr-tune" show --gpu h200 --db "$DB" --seq 16384 --batch 2 \
  --heads 16 --head-dim 128
export PYTHONPATH="$D/python" SWR_RUNTIME_LIBRARY="$BIN/libswr_runtime.so"
step bench 90 python3 "$D/bench/attention_vs_pytorch.py" --gpu h200 --catalog "$DB" \
  --shapes 8x16x4096 2x16x16384 --head-dims 64 128 --out "$OUT/bench"
cat "$OUT/bench.log" | tail -12
rm -rf "$OUT/cubins" "$OUT/cache"
