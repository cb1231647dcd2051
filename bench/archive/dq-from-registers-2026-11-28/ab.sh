#!/usr/bin/env bash
# A/B of the dQ route on one H200: bulk reduction by the writer against vector reductions from the consumers' registers.
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/env.txt
SHAPES=shapes.txt timeout 560 bash backward_build_ab.sh ./swr-tune ./swr-tune ${ROUNDS:-1} > $OUT/ab.txt 2>&1
tail -20 $OUT/ab.txt
