#!/usr/bin/env bash
# A/B: A = main, B = split, the first consumer warpgroup computing the pair half of dQ (K = 256).
cd "$(dirname "$0")"
FAMILY=attention-backward SHAPES=shapes-split2.txt timeout ${LIMIT:-500} bash backward_build_ab.sh ./swr-tune-A ./swr-tune-S4 ${ROUNDS:-2} > $OUT/ab-split2.txt 2>&1
grep -v " ok$" $OUT/ab-split2.txt | tail -12
