#!/usr/bin/env bash
# issue 13, GPU call: wgmma correctness (every knob case, own process each, in parallel),
# compute-sanitizer racecheck/synccheck on one variant per consumer mode, then swr-tune on the
# h200 space's wgmma variants (cuBLAS in the same run) and the tuned best head to head (ABBA).
set -u
D=$(cd "$(dirname "$0")" && pwd)
export HOME=$OUT/home SWR_CACHE_DIR=$OUT/cubins
mkdir -p "$HOME" "$OUT/tests" "$OUT/san" "$OUT/tune"
nvidia-smi -L > "$OUT/gpu.txt" 2>&1; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv >> "$OUT/gpu.txt" 2>&1
T0=$(date +%s)
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
H2H=""
while read -r m n k dtype budget; do
  tag=${m}x${n}x${k}_$dtype
  keys=$(sed 's/^/--config /' "$D/keys_${m}x${n}x${k}.txt" | tr '\n' ' ')
  timeout $((budget + 25)) "$D/swr-tune" tune --family gemm --m $m --n $n --k $k --dtype $dtype --gpu h200 --time-budget $budget $keys > "$OUT/tune/$tag.log" 2>&1
  echo "tune $tag rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
  "$D/swr-tune" query --family gemm --m $m --n $n --k $k --dtype $dtype --gpu h200 > "$OUT/tune/$tag.query" 2>&1
  key=$(awk '/variant/ {print $2; exit}' "$OUT/tune/$tag.query")
  [[ -n $key ]] && H2H="$H2H$m,$n,$k,$dtype,$key;"
done < "$D/shapes.txt"
echo "$H2H" > "$OUT/h2h-input.txt"
SWR_GEMM_HEAD_TO_HEAD="$H2H" timeout 60 "$D/gemm_performance_gpu_test" --gtest_filter='*ChosenVariants*' > "$OUT/h2h.log" 2>&1
echo "h2h rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
