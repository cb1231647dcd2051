# prof.sh swr|fa4: ncu --set full (clocks at base, ncu's default) over one training step of each
# point through bench/training_step.py's candidates (prof.py), exported as csv under $OUT. Ran from
# the repository root on the GPU machine with P=.device/slim (bench/backward_peers_device_run.sh's
# staged python package, lib and bench, plus a tune call's catalog.db) and, for fa4, FA4 4.0.0b36's
# two packs (../shared/peers/fa4/pack.sh): the first copied to /tmp/fa4 by the call before.
set -u
who=$1
here=$(cd "$(dirname "$0")" && pwd)
P=${P:-.device/peers}
mkdir -p /tmp/swr-peers && cp $P/catalog.db /tmp/swr-peers/catalog.db
export SWR_RUNTIME_LIBRARY=$PWD/$P/lib/libswr_runtime.so SWR_CACHE_DIR=/tmp/swr-peers/cubins SWR_TUNE_PATH=$PWD/$P/bin/swr-tune
export PYTHONPATH=$PWD/$P/python:${PYTHONPATH:-}
if [[ $who == fa4 ]]; then
  cat /tmp/fa4/part.* .device/fa4b/part.* | xz -d -T8 | (mkdir -p /tmp/site && tar -C /tmp/site -xf -)
  export PYTHONPATH=$PYTHONPATH:/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site
fi
POINTS="2x16x16384x128-noncausal 2x32x16384x64-noncausal 1x16x32768x128-causal"
for p in $POINTS; do
  timeout 200 ncu --profile-from-start off --set full --import-source no -f -o $OUT/$who-$p python3 $here/prof.py $PWD/$P/bench $who $p > $OUT/$who-$p.log 2>&1
  echo "$who $p rc=$?"; tail -3 $OUT/$who-$p.log
  ncu --import $OUT/$who-$p.ncu-rep --page details --csv > $OUT/$who-$p-details.csv 2>&1
  ncu --import $OUT/$who-$p.ncu-rep --page source --csv --print-source sass > $OUT/$who-$p-sass.csv 2>&1
  xz -T8 $OUT/$who-$p-sass.csv
  ls -la $OUT | tail -4
done
