#!/usr/bin/env bash
# Call 1 of 3 (41780e5): the backward GPU test and the sanitizers; old (3bc153c, swr-tune-H) vs new
# static variants; then the grid's tune of its first six points.
cd "$(dirname "$0")"
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/env.txt
mkdir -p $OUT/check && OUT=$OUT/check bash ../ws/run.sh check > $OUT/check.txt 2>&1; tail -4 $OUT/check.txt
FAMILY=attention-backward SHAPES=shapes-static.txt timeout 200 bash backward_build_ab.sh ./swr-tune-H ../ws/bin/swr-tune 2 > $OUT/ab-static.txt 2>&1
grep "^#" $OUT/ab-static.txt | tail -5
cd ../..
mkdir -p $OUT/tune1
SWR_PEER_POINTS="4x32x4096x64-noncausal 4x32x4096x64-causal 2x32x16384x64-causal 2x16x16384x128-causal 1x32x32768x64-causal 4x16x4096x128-causal" \
  DEADLINE=$((585 - (SECONDS - start))) OUT=$OUT/tune1 bash .device/peers/run.sh tune
