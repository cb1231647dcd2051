# Ran from the repository root on the GPU machine with .device/l2b/swr-tune (a stripped swr-tune build).
# Cycles (gpc__cycles_elapsed.max), clock, time, DRAM bytes and L2 hit rate of swr backward variants
# under ncu with the clocks left alone, three interleaved rounds: are cycles steadier than time?
set -u
D=.device/l2b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/env.txt
M=gpu__time_duration.sum,gpc__cycles_elapsed.max,gpc__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct
S128="--batch 2 --heads 16 --seq 16384 --head-dim 128"
S64="--batch 2 --heads 32 --seq 16384 --head-dim 64"
V=("$S128|bwd-wgmma-m80n128w12s2-cyclic-dynamic-head_major" "$S128|bwd-wgmma-m80n128w12s2-cyclic-grid-head_major"
   "$S128|bwd-wgmma-m80n128w12s2-cyclic-grid-head_major-pair" "$S128|bwd-wgmma-m80n128w12s2-sawtooth-grid-groups3-pair"
   "$S128|bwd-wgmma-m80n128w12s2-cyclic-static-head_major"
   "$S64|bwd-wgmma-m128n128w12s2-cyclic-dynamic-head_major" "$S64|bwd-wgmma-m128n128w12s2-cyclic-grid-head_major"
   "$S64|bwd-wgmma-m128n128w12s2-sawtooth-dynamic-head_major")
for round in 1 2 3; do
  for v in "${V[@]}"; do
    read -ra shape <<<"${v%%|*}"; key=${v##*|}
    echo "### round $round ${v%%|*} $key" >> $OUT/ncu.csv
    timeout 100 ncu --clock-control none -k regex:swr_attention_backward_v1 --launch-skip 2 --launch-count 1 \
      --metrics $M --csv $D/swr-tune --family attention-backward --gpu auto --dtype bf16 "${shape[@]}" \
      --config $key --counters none --db /tmp/l2b-$round.db >> $OUT/ncu.csv 2>> $OUT/ncu.err
    echo "round $round $key rc=$?"
  done
done
for round in 1 2 3; do $D/swr-tune show --family attention-backward --gpu auto --db /tmp/l2b-$round.db >> $OUT/tuner-times.txt 2>&1; done
