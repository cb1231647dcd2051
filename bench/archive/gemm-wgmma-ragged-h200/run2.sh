#!/usr/bin/env bash
# issue 13 (helper gemm-13b), GPU call 2 on the H200:
#  A (in parallel): the 14 wgmma cases of gemm_kernel_gpu_test on odd sizes (call 1 listed none),
#    scripts/check-runtime-on-gpu.sh (with its new wgmma GEMM steps);
#  B (alone): swr-tune of 5000x3000x7000 f16 on a few keys (static, stream-K, 1x2; the tuner's
#    own numbers), then head to head with cuBLAS (ABBA, flushed L2) of stream-K and 1x2 variants
#    against call 1's chosen ones on the three ragged shapes.
set -u
D=$(cd "$(dirname "$0")" && pwd)
B=/tmp/g13b-bin
mkdir -p $B && tar -C $B -xJf "$D/bin.tar.xz"
export HOME=$OUT/home SWR_CACHE_DIR=/tmp/g13b-cubins
mkdir -p "$HOME" "$OUT/tests"
T0=$(date +%s)
for c in $($B/gemm_kernel_gpu_test --gtest_list_tests | sed -n 's/^ *MatchesReferenceOnOddSizes\/\(wgmma_[^ ]*\).*/\1/p'); do
  (export SWR_TUNE_PATH=$B/swr-tune; timeout 150 $B/gemm_kernel_gpu_test --gtest_filter="*MatchesReferenceOnOddSizes/$c" > "$OUT/tests/$c.log" 2>&1) &
done
(BIN=$B OUT=$OUT/runtime-check timeout 300 bash "$D/scripts/check-runtime-on-gpu.sh" > "$OUT/runtime-check.txt" 2>&1) &
wait
echo "phase A: $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
grep -H "PASSED\|FAILED\|SKIPPED\|runs checked" "$OUT"/tests/*.log > "$OUT/tests-summary.txt"
cat "$OUT"/runtime-check/*.log > "$OUT/runtime-check-logs.txt" 2>/dev/null
rm -rf "$OUT/runtime-check/cubins" "$OUT/runtime-check/export" "$OUT/tests"
K=wgmma-m128n256k64s3-cooperative
keys="--config $K-c2x1-static-swzn2048 --config $K-c2x1-streamk-swzn2048 --config $K-c1x1-streamk-swzn2048 --config $K-c1x1-static-swzn2048 --config $K-c1x2-static-swzn2048 --config wgmma-m256n128k64s3-cooperative-c1x2-static-swzn2048 --config $K-c2x1-streamk-swz0"
$B/swr-tune tune --family gemm --m 5000 --n 3000 --k 7000 --dtype f16 --gpu h200 --db $OUT/small.db $keys > "$OUT/tune-small.log" 2>&1
echo "tune rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
$B/swr-tune show --family gemm --m 5000 --n 3000 --k 7000 --dtype f16 --gpu h200 --db $OUT/small.db > "$OUT/tune-small.show" 2>&1
H=""
for s in "5000,3000,7000,f16" "5000,3000,7000,bf16"; do
  for v in $K-c2x1-static-swzn2048 $K-c2x1-streamk-swzn2048 $K-c1x1-streamk-swzn2048 $K-c1x2-static-swzn2048 wgmma-m256n128k64s3-cooperative-c1x2-static-swzn2048; do H="$H$s,$v;"; done
done
for v in wgmma-m128n192k64s4-cooperative-c2x1-static-swzm2048 wgmma-m128n192k64s4-cooperative-c2x1-streamk-swzm2048 $K-c2x1-streamk-swzm2048; do H="${H}6000,5000,4000,f16,$v;"; done
for v in $K-c2x1-static-swzn512 $K-c2x1-streamk-swzn512 $K-c1x1-streamk-swzn512 $K-c1x2-static-swzn512; do H="${H}3000,7000,5000,bf16,$v;"; done
echo "$H" > "$OUT/h2h-input.txt"
SWR_GEMM_HEAD_TO_HEAD="$H" timeout 200 $B/gemm_performance_gpu_test --gtest_filter='*ChosenVariants*' > "$OUT/h2h.log" 2>&1
echo "h2h rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
