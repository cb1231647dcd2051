#!/usr/bin/env bash
# issue 13 (helper gemm-13b), GPU call 3 on the H200, after the stream-K spill fix:
#  A (in parallel): the stream-K and 1x2 cases of gemm_kernel_gpu_test on odd sizes, racecheck and
#    synccheck on the 2x1 stream-K case (cross-CTA fixup inside clusters);
#  B (alone): where stream-K should pay (aligned shapes whose tiles leave a partial last wave):
#    a small swr-tune of 3072^3 f16 (static vs stream-K, cuBLAS in the same run), then head to head
#    with cuBLAS (ABBA, flushed L2) on 3072^3, 5120x3072x7168 and the ragged 5000x3000x7000.
set -u
D=$(cd "$(dirname "$0")" && pwd)
B=/tmp/g13b-bin
rm -rf $B && mkdir -p $B && tar -C $B -xJf "$D/bin.tar.xz"
export HOME=$OUT/home SWR_CACHE_DIR=/tmp/g13b-cubins3
mkdir -p "$HOME" "$OUT/tests" "$OUT/san"
T0=$(date +%s)
S=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for c in $($B/gemm_kernel_gpu_test --gtest_list_tests | sed -n 's/^ *MatchesReferenceOnOddSizes\/\(wgmma_[^ ]*\).*/\1/p' | grep "streamk\|c1x2"); do
  timeout 150 $B/gemm_kernel_gpu_test --gtest_filter="*MatchesReferenceOnOddSizes/$c" > "$OUT/tests/$c.log" 2>&1 &
done
c=wgmma_m128n256k64s3_cooperative_c2x1_streamk_swz0_f16
for tool in racecheck synccheck; do
  timeout 240 "$S" --tool $tool $B/gemm_kernel_gpu_test --gtest_filter="*MatchesReferenceOnOddSizes/$c" > "$OUT/san/$tool-$c.log" 2>&1 &
done
wait
echo "phase A: $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
grep -H "PASSED\|FAILED\|SKIPPED\|runs checked" "$OUT"/tests/*.log > "$OUT/tests-summary.txt"
grep -H "SUMMARY\|PASSED\|FAILED" "$OUT"/san/*.log > "$OUT/san-summary.txt"
rm -rf "$OUT/tests" "$OUT/san"
K=wgmma-m128n256k64s3-cooperative
Q=wgmma-m128n128k64s4-cooperative
keys="--config $K-c1x1-static-swzn1536 --config $K-c2x1-static-swzn1536 --config $K-c1x1-streamk-swzn1536 --config $K-c2x1-streamk-swzn1536 --config $Q-c1x1-static-swzn1536 --config $Q-c1x1-streamk-swzn1536"
$B/swr-tune tune --family gemm --size 3072 --dtype f16 --gpu h200 --db $OUT/small.db $keys > "$OUT/tune-3072.log" 2>&1
echo "tune rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
$B/swr-tune query --family gemm --size 3072 --dtype f16 --gpu h200 --db $OUT/small.db > "$OUT/tune-3072.query" 2>&1
H=""
for v in $K-c1x1-static-swzn1536 $K-c1x1-streamk-swzn1536 $K-c2x1-static-swzn1536 $K-c2x1-streamk-swzn1536; do H="${H}3072,3072,3072,f16,$v;"; done
for v in $K-c1x1-static-swzn1536 $K-c1x1-streamk-swzn1536 $K-c2x1-static-swzn1536 $K-c2x1-streamk-swzn1536; do H="${H}5120,3072,7168,f16,$v;"; done
for v in $K-c2x1-static-swzn2048 $K-c2x1-streamk-swzn2048; do H="${H}5000,3000,7000,f16,$v;"; done
echo "$H" > "$OUT/h2h-input.txt"
SWR_GEMM_HEAD_TO_HEAD="$H" timeout 200 $B/gemm_performance_gpu_test --gtest_filter='*ChosenVariants*' > "$OUT/h2h.log" 2>&1
echo "h2h rc $? at $(( $(date +%s) - T0 )) s" >> "$OUT/gpu.txt"
