#!/bin/bash
# The rest of the GPU suite (the attention programs ran in attention-shapes), one program after
# another (timing tests need the GPU alone), each with its own limit.
set -u
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=/tmp/swr-gpu-suite; rm -rf $W; mkdir -p $W/home $W/cubins $OUT/logs
tar -C $W -xJf $D/bin.tar.xz
export HOME=$W/home XDG_CACHE_HOME=$W/xdg SWR_CACHE_DIR=$W/cubins SWR_TUNE_PATH=$W/bin/swr-tune
export SWR_EXAMPLE_PATH=$W/bin/swr_attention_example SWR_GEMM_EXAMPLE_PATH=$W/bin/swr_gemm_example
export SWR_RUNTIME_LIBRARY=$W/lib/libswr_runtime.so
for entry in "runtime_gpu_test 45" "l2_counters_gpu_test 30" "gemm_kernel_gpu_test 80" "tuning_gpu_test 90" "gemm_performance_gpu_test 40"; do
  set -- $entry; t0=$SECONDS
  timeout $2 $W/bin/$1 > $OUT/logs/$1.log 2>&1; rc=$?
  echo "$1 rc=$rc $((SECONDS-t0))s ok=$(grep -c '^\[       OK \]' $OUT/logs/$1.log) skipped=$(grep -c '^\[  SKIPPED \]' $OUT/logs/$1.log) failed=$(grep -c '^\[  FAILED  \] .*(' $OUT/logs/$1.log)" | tee -a $OUT/steps.txt
  grep '^\[  FAILED  \] .*(' $OUT/logs/$1.log | head -5
done
