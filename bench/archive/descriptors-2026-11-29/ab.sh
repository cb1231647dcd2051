#!/usr/bin/env bash
# A = main (439a017); G = the backward ws consumers descriptors built once a kernel below 128 Q rows (BackwardWsDescriptors).

cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/env.txt
OUT=$OUT/check bash ../ws/run.sh check > $OUT/check.txt 2>&1; tail -5 $OUT/check.txt
FAMILY=attention-backward SHAPES=shapes-bwd.txt timeout ${LIMIT:-480} bash backward_build_ab.sh ./swr-tune-A ./swr-tune-G ${ROUNDS:-2} > $OUT/ab-bwd.txt 2>&1
grep -c " ok" $OUT/ab-bwd.txt; grep -v " ok$" $OUT/ab-bwd.txt | tail -12
