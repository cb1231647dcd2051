# prof2.sh swr|fa4: the backward main kernels under ncu --clock-control none (real clocks), a few
# metrics, three steps a point. Call 1 (swr) carries .device/fa4a and keeps it in /tmp/fa4.
set -u
who=$1
here=$(cd "$(dirname "$0")" && pwd)
P=.device/peers
W=/tmp/swr-clk; mkdir -p $W/home
export SWR_RUNTIME_LIBRARY=$PWD/$P/lib/libswr_runtime.so SWR_CACHE_DIR=$W/cubins SWR_TUNE_PATH=$PWD/$P/bin/swr-tune HOME=$W/home SWR_DB=
export PYTHONPATH=$PWD/$P/python PYTHONUNBUFFERED=1
[[ -f $W/catalog.db ]] || cp $here/catalog.db $W/catalog.db
if [[ $who == swr ]]; then
  mkdir -p /tmp/fa4 && cp .device/fa4a/part.* /tmp/fa4/ 2>/dev/null
  $P/bin/swr-tune --gpu auto --batch 1 --heads 16 --seq 32768 --head-dim 128 --dtype bf16 --causal --model-top 10 --counters none --db $W/catalog.db -j 16 > $OUT/tune-fwd.log 2>&1
  $P/bin/swr-tune --family attention-backward --gpu auto --batch 1 --heads 16 --seq 32768 --head-dim 128 --dtype bf16 --causal --model-top 10 --counters none --db $W/catalog.db -j 16 > $OUT/tune-bwd.log 2>&1
  echo "tune rc=$?"
else
  cat /tmp/fa4/part.* .device/fa4b/part.* | xz -d -T8 | (mkdir -p /tmp/site && tar -C /tmp/site -xf -)
  export PYTHONPATH=$PYTHONPATH:/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site
fi
M=gpu__time_duration.sum,sm__cycles_elapsed.max,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,sm__inst_executed.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_red.sum,lts__t_sectors_srcunit_tex_op_read.sum
for p in 2x16x16384x128-noncausal 1x16x32768x128-causal; do
  STEPS=3 CATALOG=$W/catalog.db timeout 240 ncu --profile-from-start off --clock-control none --metrics $M --kernel-name "regex:backward_v1|bwd_sm90|BackwardSm90" --csv python3 $here/../peer-profiles-2026-11-27/prof.py $PWD/$P/bench $who $p > $OUT/$who-$p.csv 2> $OUT/$who-$p.err
  echo "$who $p rc=$?"; grep -v '^"' $OUT/$who-$p.csv | tail -3; tail -2 $OUT/$who-$p.err
done
