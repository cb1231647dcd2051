#!/usr/bin/env bash
# A = main; B = main with 240/24 registers at m64 D128; C = B + the pair's dS^T exchanged (unused); D = the split (S4).
cd "$(dirname "$0")"
FAMILY=attention-backward SHAPES=shapes-split2.txt timeout ${LIMIT:-540} bash backward_build_ab.sh ./swr-tune-A ./swr-tune-R ./swr-tune-S5 ./swr-tune-S4 ${ROUNDS:-2} > $OUT/ab-split3.txt 2>&1
grep -v " ok$" $OUT/ab-split3.txt | tail -12
