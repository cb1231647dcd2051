#!/usr/bin/env bash
# Second device call for the wgmma attention path (issue 12): compute-sanitizer racecheck and
# synccheck on one variant per consumer mode (first GPU-test shape only), swr vs cuDNN/FA2 again
# from the database the first call tuned ($D/tuned.db, to keep results.json), a full tune of one
# shape with both paths (timed) and its re-run, and the sawtooth/cyclic twins of wgmma variants at
# B=8, H=1 where one head's K/V (32 MiB) exceeds what one L2 partition (30 MiB) keeps.
# Everything under $OUT is packed into $OUT/all.tar.gz at the end.
set -uo pipefail
D=${D:-.device/a12}
OUT=${OUT:-/tmp/a12-out2}
mkdir -p "$OUT/logs"
BIN=$(cd "$D/bin" && pwd)
export SWR_CACHE_DIR="$OUT/cubins" XDG_CACHE_HOME="$OUT/cache" HOME="$OUT/home"
mkdir -p "$HOME"
BUDGET=${BUDGET:-320}
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS left=$((BUDGET - SECONDS))
  if ((left < 5)); then echo "$name skipped (budget)" | tee -a "$OUT/steps.txt"; return; fi
  ((limit > left)) && limit=$left
  timeout "$limit" "$@" > "$OUT/logs/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - start))s" | tee -a "$OUT/steps.txt"
}
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/gpu.txt" 2>&1

# Consumer modes: 2 WGs ov+pp (0), plain (4), pp only (3), ov only (7); 3 WGs (2).
FILTER='*wgmma_m128n128s2_ov_pp_cyclic_grid_head_major_d128_f16:*wgmma_m128n128s3_evl_cyclic_grid_groups2_d128_f16_causal:*wgmma_m128n160s3_pp_sawtooth_grid_head_major_d64_bf16:*wgmma_m128n192s2_ov_cyclic_grid_head_major_d128_f16:*wgmma_m192n192s2_cyclic_static_groups4_d64_f16_causal'
for tool in racecheck synccheck; do
  SWR_WGMMA_FIRST_SHAPE_ONLY=1 step "sanitizer_$tool" 70 compute-sanitizer --tool "$tool" \
    --print-limit 20 "$BIN/attention_wgmma_gpu_test" --gtest_filter="$FILTER"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|tests ran|PASSED|FAILED" "$OUT/logs/sanitizer_$tool.log"
done

export PYTHONPATH="$D/python" SWR_RUNTIME_LIBRARY="$BIN/libswr_runtime.so"
cp "$D/tuned.db" "$OUT/tuned.db"
step bench 40 python3 "$D/bench/attention_vs_pytorch.py" --gpu h200 --catalog "$OUT/tuned.db" \
  --shapes 8x16x4096 2x16x16384 --head-dims 64 128 --out "$OUT/bench"
tail -11 "$OUT/logs/bench.log"

FULL="$OUT/full.db"
step full_tune 150 "$BIN/swr-tune" --gpu h200 --batch 2 --heads 16 --seq 16384 --head-dim 128 \
  --db "$FULL"
step full_tune_rerun 30 "$BIN/swr-tune" --gpu h200 --batch 2 --heads 16 --seq 16384 \
  --head-dim 128 --db "$FULL"
tail -3 "$OUT/logs/full_tune.log" "$OUT/logs/full_tune_rerun.log"

TWIN="$OUT/twins.db"
for pair in "128 65536 wgmma-m128n128s2-ov-pp" "64 131072 wgmma-m192n128s2"; do
  read -r d s base <<< "$pair"
  args=()
  for order in cyclic sawtooth; do
    for persistence in grid static; do args+=(--config "$base-$order-$persistence-head_major"); done
  done
  step "twins_d$d" 40 "$BIN/swr-tune" --gpu h200 --batch 8 --heads 1 --seq "$s" --head-dim "$d" \
    --db "$TWIN" "${args[@]}"
done
rm -rf "$OUT/cubins" "$OUT/cache" "$OUT/home"
tar -C "$OUT" -czf /tmp/all.tar.gz . && mv /tmp/all.tar.gz "$OUT/all.tar.gz"
find "$OUT" -mindepth 1 -maxdepth 1 ! -name all.tar.gz ! -name steps.txt -exec rm -rf {} +
cat "$OUT/steps.txt"
