# The backward GPU test's warp-specialized cases (.device/q/bwdtest, built here), racecheck and
# synccheck on three cases that split, then ncu.sh: call 6 of last-wave-2026-11-27.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/card.txt
export SWR_CACHE_DIR=/tmp/swrc-final
timeout 240 .device/q/bwdtest --gtest_filter='*w12*' > $OUT/gputest.txt 2>&1; echo "gpu test rc=$?"
grep -E "^\[  (PASSED|FAILED) |tests ran|FAILED  \]" $OUT/gputest.txt | head
for tool in racecheck synccheck; do
  for t in bwd_wgmma_m80n128w12s2_cyclic_grid_head_major_d128_bf16 bwd_wgmma_m80n128w12s2_sawtooth_dynamic_head_major_lag_d128_f16 bwd_wgmma_m80n128w12s2_cyclic_grid_head_major_pair_d128_bf16; do
    SWR_BACKWARD_FIRST_SHAPE_ONLY=1 timeout 100 compute-sanitizer --tool $tool .device/q/bwdtest --gtest_filter="*/$t" > $OUT/$tool-$t.txt 2>&1
    echo "$tool $t rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $OUT/$tool-$t.txt | tr '\n' ' ')"
  done
done
SIDES="A B" OUT=$OUT bash "$(dirname "$0")/ncu.sh" 2>&1 | tail -8
