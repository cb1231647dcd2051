#!/usr/bin/env bash
# Forward build A/B on a GPU machine (carry .device/fp: this script, bench/backward_build_ab.sh,
# the shape files, stripped swr-tune-M = main and one swr-tune-X per build): the tuner's fp32 check
# of the builds in SIDES on odd shapes, then M against the builds in BINS on SHAPES_T, R rounds.
# Call 1: BINS="./swr-tune-P2 ./swr-tune-P3 ./swr-tune-P4" SIDES=P4 (exp2-polynomial-P.diff with
# SWR_POLYNOMIAL_EIGHTHS 2, 3, 4). Call 2: BINS="./swr-tune-R ./swr-tune-R2" SIDES=R2 R=4 (R: the
# landed threshold; R2: R + partial-sums-R2.diff). Call 3 (mma.sync): SHAPES=shapes-mma.txt
# FAMILY=attention bash backward_build_ab.sh ./swr-tune-M ./swr-tune-R 3.
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/env.txt"
for X in ${SIDES:-P4}; do
  SHAPES=shapes-odd.txt FAMILY=attention timeout ${TC:-120} bash backward_build_ab.sh ./swr-tune-$X ./swr-tune-$X 1 > "$OUT/check-$X.txt" 2>&1
  grep -c " ok" "$OUT/check-$X.txt"; grep -v "^#" "$OUT/check-$X.txt" | grep -v " ok$" | head -5
done
SHAPES=${SHAPES_T:-shapes-fwd.txt} FAMILY=attention timeout ${T:-420} bash backward_build_ab.sh ./swr-tune-M ${BINS:-./swr-tune-P2 ./swr-tune-P3 ./swr-tune-P4} ${R:-2} > "$OUT/abp-forward.txt" 2>&1
grep -h "^#\|FAIL" "$OUT"/abp-forward.txt
