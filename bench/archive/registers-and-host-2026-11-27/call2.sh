set -u
P=.device/peers; W=/tmp/swr-clk
export SWR_RUNTIME_LIBRARY=$PWD/$P/lib/libswr_runtime.so SWR_CACHE_DIR=$W/cubins SWR_TUNE_PATH=$PWD/$P/bin/swr-tune HOME=$W/home SWR_DB= PYTHONUNBUFFERED=1
[[ -d /tmp/site/flash_attn ]] || cat /tmp/fa4/part.* .device/fa4b/part.* | xz -d -T8 | (mkdir -p /tmp/site && tar -C /tmp/site -xf -)
export PYTHONPATH=$PWD/$P/python:/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site
python3 .device/clk/kstep.py $PWD/$P/bench $W/catalog.db ${ROUNDS:-8} 2x16x16384x128-noncausal 1x16x32768x128-causal 1x16x32768x128-noncausal 2>&1 | grep -v "Warning\|exe_args\|_warn_once" | tee $OUT/kstep.txt
cp /tmp/kstep.json $OUT/ 2>/dev/null
