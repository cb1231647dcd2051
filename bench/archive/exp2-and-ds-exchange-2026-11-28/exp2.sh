#!/usr/bin/env bash
# A/B/C of the exponentials' pipe: A all on the MUFU, B one n8 block in 4 on the FMA pipe, C one in 2.
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/env.txt
FAM=${FAM:-attention}
F=$([ "$FAM" = attention ] && echo fwd || echo bwd)
FAMILY=$FAM SHAPES=shapes-$F.txt timeout ${LIMIT:-560} bash backward_build_ab.sh ./swr-tune-A ./swr-tune-B ./swr-tune-C ${ROUNDS:-2} > $OUT/ab-$F.txt 2>&1
grep -c " ok" $OUT/ab-$F.txt; grep -v " ok$" $OUT/ab-$F.txt | tail -20
