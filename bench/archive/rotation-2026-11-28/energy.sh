#!/usr/bin/env bash
# After a split peers round on a machine of two GPUs: joules a call, sustained, at one point each.
here=$PWD/.device/peers
export PYTHONPATH=$here/python:/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site PYTHONUNBUFFERED=1
export SWR_RUNTIME_LIBRARY=$here/lib/libswr_runtime.so SWR_DB= CUDA_DEVICE_ORDER=PCI_BUS_ID
cd $here/bench
for g in 0 1; do
  p=$([[ $g == 1 ]] && echo 1x16x32768x128-causal || echo 1x16x32768x128-noncausal)
  CUDA_VISIBLE_DEVICES=$g SWR_CACHE_DIR=/tmp/swr-peers-gpu$g/cubins HOME=/tmp/swr-peers-gpu$g/home \
    timeout 200 python3 training_step_power.py --catalog /tmp/swr-peers-gpu$g/catalog.db \
    --points $p --rounds 2 --nvml-index $g 2>&1 | grep -v -i "warn\|exe_args" > $OUT/energy-gpu$g.txt &
done
wait
cat $OUT/energy-gpu*.txt
