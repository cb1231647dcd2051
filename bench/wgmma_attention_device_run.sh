#!/usr/bin/env bash
# The device calls for the wgmma attention path (issue 12), from binaries staged on the build
# machine into $D (default .device/a12): bin/ (swr-tune, attention_wgmma_gpu_test,
# libswr_runtime.so), bench/*.py, python/swr, and for call 2 also tuned.db (call 1's results.db).
# Each step has its own timeout and no step runs past $BUDGET seconds; results go to $OUT.
#
#   CALL=1 (default): the GPU test of every new knob value through the runtime launcher,
#     racecheck + synccheck on one variant per consumer mode, a tune of the issue's shapes through
#     swr-tune with a chosen key list (both paths), then swr (the runtime's choice, launched by
#     libswr_runtime.so) against cuDNN and FA2, interleaved (bench/attention_vs_pytorch.py).
#   CALL=2: racecheck and synccheck on one variant per consumer mode (first GPU-test shape only),
#     swr vs cuDNN/FA2 again from $D/tuned.db, a full tune of one shape with both paths (timed) and
#     its re-run, and the sawtooth/cyclic twins of wgmma variants at B=8, H=1 where one head's K/V
#     (32 MiB) exceeds what one L2 partition (30 MiB) keeps. Logs go to $OUT/logs/, and everything
#     under $OUT is packed into $OUT/all.tar.gz at the end.
set -uo pipefail
CALL=${CALL:-1}
D=${D:-.device/a12}
OUT=${OUT:-/tmp/a12-out$([[ $CALL == 2 ]] && echo 2)}
case $CALL in
  1) LOGS=$OUT; BUDGET=${BUDGET:-330} ;;
  2) LOGS=$OUT/logs; BUDGET=${BUDGET:-320} ;;
  *) echo "bad CALL '$CALL': allowed 1, 2" >&2; exit 2 ;;
esac
mkdir -p "$OUT" "$LOGS"
BIN=$(cd "$D/bin" && pwd)
export SWR_CACHE_DIR="$OUT/cubins" XDG_CACHE_HOME="$OUT/cache" HOME="$OUT/home"
mkdir -p "$HOME"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1

step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS left=$((BUDGET - SECONDS))
  if ((left < 5)); then echo "$name skipped (budget)" | tee -a "$OUT/steps.txt"; return; fi
  ((limit > left)) && limit=$left
  timeout "$limit" "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - start))s" | tee -a "$OUT/steps.txt"
}

sanitize() {  # sanitize SECONDS FILTER: racecheck and synccheck of the GPU test's variants
  local limit=$1 filter=$2 tool
  for tool in racecheck synccheck; do
    step "sanitizer_$tool" "$limit" compute-sanitizer --tool "$tool" --print-limit 20 \
      "$BIN/attention_wgmma_gpu_test" --gtest_filter="$filter"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|tests ran|PASSED|FAILED" "$LOGS/sanitizer_$tool.log" |
      tail -4
  done
}

peers() {  # peers DATABASE: swr's chosen variant against cuDNN and FA2, head to head
  export PYTHONPATH="$D/python" SWR_RUNTIME_LIBRARY="$BIN/libswr_runtime.so"
  step bench "$1" python3 "$D/bench/attention_vs_pytorch.py" --gpu h200 --catalog "$2" \
    --shapes 8x16x4096 2x16x16384 --head-dims 64 128 --out "$OUT/bench"
  tail -12 "$LOGS/bench.log"
}

call_1() {
  step gpu_test 80 "$BIN/attention_wgmma_gpu_test"
  tail -5 "$LOGS/gpu_test.log"
  # One variant per consumer mode: 2 WGs overlap+pingpong, 2 WGs plain, 3 WGs.
  local p=EveryKnob/WgmmaOnGpu.MatchesReferenceThroughTheLauncher
  sanitize 40 "$p/0:$p/4:$p/2"

  local db="$OUT/results.db"
  local k128=(wgmma-m128n128s2-ov-pp-cyclic-grid-head_major wgmma-m128n176s2-ov-pp-cyclic-grid-head_major
    wgmma-m128n160s2-ov-pp-cyclic-grid-head_major wgmma-m128n128s2-ov-cyclic-grid-head_major
    wgmma-m128n176s2-ov-cyclic-grid-head_major wgmma-m128n128s2-ov-pp-cyclic-static-head_major
    wgmma-m128n128s2-ov-pp-sawtooth-grid-head_major m128n128w8s2-cyclic-grid-head_major
    m128n64w4s2-cyclic-grid-head_major)
  local k64=(wgmma-m192n192s2-cyclic-grid-head_major wgmma-m192n160s2-cyclic-grid-head_major
    wgmma-m192n128s2-ov-cyclic-grid-head_major wgmma-m128n192s2-ov-pp-cyclic-grid-head_major
    wgmma-m128n128s2-ov-pp-cyclic-grid-head_major wgmma-m192n192s3-cyclic-grid-head_major
    m128n128w8s2-cyclic-grid-head_major m128n64w4s2-cyclic-grid-head_major)
  local shape b h s d keys args k
  for shape in "8 16 4096" "2 16 16384"; do
    read -r b h s <<< "$shape"
    for d in 128 64; do
      if [[ $d == 128 ]]; then keys=("${k128[@]}"); else keys=("${k64[@]}"); fi
      args=(); for k in "${keys[@]}"; do args+=(--config "$k"); done
      step "tune_b${b}_h${h}_s${s}_d${d}" 45 "$BIN/swr-tune" --gpu h200 --batch "$b" --heads "$h" \
        --seq "$s" --head-dim "$d" --both --db "$db" "${args[@]}"
    done
  done
  step show 10 "$BIN/swr-tune" show --gpu h200 --db "$db"
  step show_b2_s16384_d128 10 "$BIN/swr-tune" show --gpu h200 --db "$db" --seq 16384 --batch 2 \
    --heads 16 --head-dim 128
  peers 90 "$db"
  rm -rf "$OUT/cubins" "$OUT/cache"
}

call_2() {
  # Consumer modes: 2 WGs ov+pp (0), plain (4), pp only (3), ov only (7); 3 WGs (2).
  SWR_WGMMA_FIRST_SHAPE_ONLY=1 sanitize 70 '*wgmma_m128n128s2_ov_pp_cyclic_grid_head_major_d128_f16:*wgmma_m128n128s3_evl_cyclic_grid_groups2_d128_f16_causal:*wgmma_m128n160s3_pp_sawtooth_grid_head_major_d64_bf16:*wgmma_m128n192s2_ov_cyclic_grid_head_major_d128_f16:*wgmma_m192n192s2_cyclic_static_groups4_d64_f16_causal'

  cp "$D/tuned.db" "$OUT/tuned.db"
  peers 40 "$OUT/tuned.db"

  local full="$OUT/full.db"
  step full_tune 150 "$BIN/swr-tune" --gpu h200 --batch 2 --heads 16 --seq 16384 --head-dim 128 \
    --db "$full"
  step full_tune_rerun 30 "$BIN/swr-tune" --gpu h200 --batch 2 --heads 16 --seq 16384 \
    --head-dim 128 --db "$full"
  tail -3 "$LOGS/full_tune.log" "$LOGS/full_tune_rerun.log"

  local pair d s base order persistence args
  for pair in "128 65536 wgmma-m128n128s2-ov-pp" "64 131072 wgmma-m192n128s2"; do
    read -r d s base <<< "$pair"
    args=()
    for order in cyclic sawtooth; do
      for persistence in grid static; do args+=(--config "$base-$order-$persistence-head_major"); done
    done
    step "twins_d$d" 40 "$BIN/swr-tune" --gpu h200 --batch 8 --heads 1 --seq "$s" --head-dim "$d" \
      --db "$OUT/twins.db" "${args[@]}"
  done
  rm -rf "$OUT/cubins" "$OUT/cache" "$OUT/home"
  tar -C "$OUT" -czf /tmp/all.tar.gz . && mv /tmp/all.tar.gz "$OUT/all.tar.gz"
  find "$OUT" -mindepth 1 -maxdepth 1 ! -name all.tar.gz ! -name steps.txt -exec rm -rf {} +
  cat "$OUT/steps.txt"
}

"call_$CALL"
