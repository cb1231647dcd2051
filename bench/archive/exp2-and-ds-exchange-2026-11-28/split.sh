#!/usr/bin/env bash
# A/B of the dQ split over a CTA pair: A = main's kernels, S = the split (m64 D128 pair lag only).
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/env.txt
# First a quick correctness/hang probe of the split variant alone.
export HOME=$(mktemp -d) SWR_DB=
timeout 120 ./swr-tune-S --family attention-backward --gpu auto --batch 1 --heads 4 --seq 4096 --head-dim 128 --dtype bf16 --causal --config bwd-wgmma-m64n128w12s2-sawtooth-grid-head_major-pair-lag --counters none --db $OUT/probe.db > $OUT/probe.txt 2>&1; echo "probe rc=$?" >> $OUT/probe.txt
timeout 120 ./swr-tune-S --family attention-backward --gpu auto --batch 1 --heads 4 --seq 4096 --head-dim 128 --dtype bf16 --config bwd-wgmma-m64n128w12s2-sawtooth-grid-head_major-pair-lag --counters none --db $OUT/probe.db >> $OUT/probe.txt 2>&1; echo "probe2 rc=$?" >> $OUT/probe.txt
./swr-tune-S show --family attention-backward --gpu auto --batch 1 --heads 4 --seq 4096 --head-dim 128 --dtype bf16 --causal --db $OUT/probe.db >> $OUT/probe.txt 2>&1
./swr-tune-S show --family attention-backward --gpu auto --batch 1 --heads 4 --seq 4096 --head-dim 128 --dtype bf16 --db $OUT/probe.db >> $OUT/probe.txt 2>&1
tail -30 $OUT/probe.txt
grep -iE "wrong|fault|hung|rc=" $OUT/probe.txt | head -5
FAMILY=attention-backward SHAPES=shapes-split.txt timeout ${LIMIT:-420} bash backward_build_ab.sh ./swr-tune-A ./swr-tune-S ${ROUNDS:-2} > $OUT/ab-split.txt 2>&1
grep -v " ok$" $OUT/ab-split.txt | tail -12
