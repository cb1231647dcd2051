#!/usr/bin/env bash
# issue 13, the GPU calls (binaries and lists staged beside this script; results under $OUT):
#   CALL=1 (default): wgmma correctness (every knob case, own process each, in parallel),
#     compute-sanitizer racecheck/synccheck on one variant per consumer mode, then swr-tune on the
#     h200 space's wgmma variants of shapes.txt (cuBLAS in the same run) and the tuned best head to
#     head (ABBA).
#   CALL=2: the remaining tunes (shapes2.txt, cuBLAS in the same run) + head to head, then the
#     paper's --sweep on the wgmma path (coop 128x256 s3 static, f16).
set -u
CALL=${CALL:-1}
D=$(cd "$(dirname "$0")" && pwd)
T0=$(date +%s)

# Tunes each shape of $1 on its wgmma keys, queries the chosen variant, then times the chosen
# variants against cuBLAS head to head (gemm_performance_gpu_test, limit $2 s).
tune_and_compare() {
  local shapes=$1 h2h_limit=$2 m n k dtype budget tag keys key h2h=""
  while read -r m n k dtype budget; do
    tag=${m}x${n}x${k}_$dtype
    keys=$(sed 's/^/--config /' "$D/keys_${m}x${n}x${k}.txt" | tr '\n' ' ')
    timeout $((budget + 25)) "$D/swr-tune" tune --family gemm --m $m --n $n --k $k --dtype $dtype --gpu h200 --time-budget $budget $keys > "$OUT/tune/$tag.log" 2>&1
    echo "tune $tag rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
    "$D/swr-tune" query --family gemm --m $m --n $n --k $k --dtype $dtype --gpu h200 > "$OUT/tune/$tag.query" 2>&1
    key=$(awk '/variant/ {print $2; exit}' "$OUT/tune/$tag.query")
    [[ -n $key ]] && h2h="$h2h$m,$n,$k,$dtype,$key;"
  done < "$D/$shapes"
  echo "$h2h" > "$OUT/h2h-input.txt"
  SWR_GEMM_HEAD_TO_HEAD="$h2h" timeout "$h2h_limit" "$D/gemm_performance_gpu_test" --gtest_filter='*ChosenVariants*' > "$OUT/h2h.log" 2>&1
  echo "h2h rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
}

if [[ $CALL == 1 ]]; then
  export HOME=$OUT/home SWR_CACHE_DIR=$OUT/cubins
  mkdir -p "$HOME" "$OUT/tests" "$OUT/san" "$OUT/tune"
  nvidia-smi -L > "$OUT/gpu.txt" 2>&1; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv >> "$OUT/gpu.txt" 2>&1
  S=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  echo "sanitizer: $S" >> "$OUT/gpu.txt"
  # 1 + 2 concurrently
  timeout 20 "$D/gemm_kernel_gpu_test" --gtest_filter='GemmKernelCases.*' > "$OUT/tests/cases.log" 2>&1
  for c in $(cat "$D/wgmma_cases.txt"); do
    timeout 75 "$D/gemm_kernel_gpu_test" --gtest_filter="*MatchesReferenceOnOddSizes/$c" > "$OUT/tests/$c.log" 2>&1 &
  done
  for c in $(cat "$D/sanitize_cases.txt"); do
    for tool in racecheck synccheck; do
      timeout 75 "$S" --tool $tool "$D/gemm_kernel_gpu_test" --gtest_filter="*MatchesReferenceOnOddSizes/$c" > "$OUT/san/$tool-$c.log" 2>&1 &
    done
  done
  wait
  echo "step 1+2: $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
  grep -H "PASSED\|FAILED\|SKIPPED\|runs checked" "$OUT"/tests/*.log > "$OUT/tests-summary.txt"
  grep -H "SUMMARY\|PASSED\|FAILED" "$OUT"/san/*.log > "$OUT/san-summary.txt"
  # 3: tune each shape on the wgmma variants of the h200 space, then query the chosen variant
  tune_and_compare shapes.txt 60
else
  export HOME=$OUT/home SWR_CACHE_DIR=/tmp/g13-cubins
  mkdir -p "$HOME" "$OUT/tune"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$OUT/gpu.txt" 2>&1
  tune_and_compare shapes2.txt 40
  timeout 75 "$D/swr-tune" tune --family gemm --sweep --dtype f16 --gpu h200 --config wgmma-m128n256k64s3-cooperative-c1x1-static-swz0 --sweep-out "$OUT/sweep" > "$OUT/sweep.log" 2>&1
  echo "sweep rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
fi
