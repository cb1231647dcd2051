# fwd.sh KEY...: ncu --set full over one timed launch of each swr forward variant at B2 H32 S16384
# D64 bf16, through the tuner (swr-tune --config KEY), exported as csv under $OUT; swr-tune as
# bench/backward_peers_device_run.sh stages it (.device/peers/bin).
set -u
T=$PWD/.device/peers/bin/swr-tune
export SWR_CACHE_DIR=/tmp/swrc HOME=/tmp/h; mkdir -p /tmp/h
for key in "$@"; do
  timeout 150 ncu --kernel-name swr_attention_forward_v3 --launch-skip 3 --launch-count 1 --set full --import-source no -f -o $OUT/$key \
    $T --gpu auto --batch 2 --heads 32 --seq 16384 --head-dim 64 --dtype bf16 --config $key --counters none --db /tmp/f-$key.db -j 16 > $OUT/$key.log 2>&1
  echo "$key rc=$?"; grep -E "ok|FAIL" $OUT/$key.log | tail -2
  ncu --import $OUT/$key.ncu-rep --page details --csv > $OUT/$key-details.csv 2>&1
  ncu --import $OUT/$key.ncu-rep --page source --csv --print-source sass 2>&1 | xz -T8 > $OUT/$key-sass.csv.xz
  rm -f $OUT/$key.ncu-rep $OUT/$key.log
done
ls -la $OUT
