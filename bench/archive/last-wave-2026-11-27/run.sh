# Call 3 of last-wave-2026-11-27: the warp-specialized GPU test cases, then
# bench/backward_build_ab.sh with A (468e402) and B (the split) over .device/q/shapes2.txt.
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/card.txt
export SWR_CACHE_DIR=/tmp/swrc-test
timeout 200 .device/q/bwdtest --gtest_filter='*w12*' 2>&1 | tail -60 > $OUT/gputest.txt
grep -E "PASSED|FAILED|tests ran" $OUT/gputest.txt
SHAPES=.device/q/shapes2.txt bash bench/backward_build_ab.sh .device/q/A .device/q/B 2 > $OUT/ab.txt 2>&1
grep "^#\|FAIL" $OUT/ab.txt
