#!/usr/bin/env bash
# Two builds of the attention backward head to head on a lent GPU: the backward's best time at
# three shapes (the GPT shape, D=128 non-causal and causal; --model-top 8, --counters none), each
# build twice in turn into fresh databases; then the backward GPU tests of the second build.
#   OLD=old/swr-tune NEW=new/swr-tune NEW_TEST=new/attention_backward_gpu_test \
#     OUT=$OUT bench/backward_dq_device_run.sh        (binaries built here, stripped, carried)
# Leaves $OUT/r.tar.gz: a log per tune, calls.txt, summary.txt, gpu_test.log.
set -uo pipefail
OLD=${OLD:?the first swr-tune} NEW=${NEW:?the second swr-tune} OUT=${OUT:?where results go}
W=$(mktemp -d); export SWR_DB= HOME=$W SWR_CACHE_DIR=$W/cubins
GPT=(--batch 8 --heads 12 --seq 2048 --head-dim 64 --dtype bf16 --causal --model-top 8)
D128=(--batch 2 --heads 16 --seq 8192 --head-dim 128 --dtype bf16 --model-top 8)
D128C=(--batch 2 --heads 16 --seq 8192 --head-dim 128 --dtype bf16 --causal --model-top 8)
mkdir -p $OUT/r
for round in 1 2; do
  for which in old new; do
    bin=$OLD; [[ $which == new ]] && bin=$NEW
    for shape in GPT D128 D128C; do
      declare -n args=$shape
      timeout 150 $bin --family attention-backward --gpu auto "${args[@]}" \
        --counters none --db $W/${which}_${shape}_$round.db -j 16 > $OUT/r/${which}_${shape}_$round.log 2>&1
      echo "$which $shape $round rc=$?" >> $OUT/r/calls.txt
    done
  done
done
for f in $OUT/r/*_[12].log; do  # each run's best: ms, TFLOP/s, variant
  printf "%-12s " "$(basename "$f" .log)"
  grep -E "^\[ *[0-9]+/" "$f" | sed 's/^\[ *[0-9]*\/[0-9]*\] *//' | awk '{print $3, $5, $1}' | sort -n | head -1
done > $OUT/r/summary.txt
if [[ -n ${NEW_TEST:-} ]]; then
  timeout 200 "$NEW_TEST" > $OUT/r/gpu_test.log 2>&1
  echo "gpu test rc=$?" >> $OUT/r/calls.txt
  tail -3 $OUT/r/gpu_test.log >> $OUT/r/calls.txt
fi
tar -C $OUT -czf $OUT/r.tar.gz r && rm -rf $OUT/r
