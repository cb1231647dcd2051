#!/usr/bin/env bash
# swr+FA4 only (step_clocks.py) against all four candidates (training_step.py), alternating, same GPU.
bash .device/unpack.sh
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo NOT-H200; exit 0; }
ls /tmp/fa4/part.* >/dev/null && [[ ! -d /tmp/site/flash_attn ]] && cat /tmp/fa4/part.* .device/fa4b/part.* | xz -d -T8 | (mkdir -p /tmp/site && tar -C /tmp/site -xf -)
here=$PWD/.device/peers
export PYTHONPATH=$here/python:/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site PYTHONUNBUFFERED=1
export SWR_RUNTIME_LIBRARY=$here/lib/libswr_runtime.so SWR_CACHE_DIR=/tmp/w/cubins HOME=/tmp/w/home SWR_DB=
mkdir -p /tmp/w/home; cp .device/clk/step_clocks.py $here/bench/; cd $here/bench
P="1x16x32768x128-causal 2x16x16384x128-causal"
for r in 1 2; do
  python3 training_step.py --catalog $here/catalog.db --points $P --out $OUT/all-$r.json 2>&1 | grep -v -i "warn\|exe_args"
  python3 step_clocks.py --catalog $here/catalog.db --points $P --target-seconds 0.5 --out $OUT/pair-$r.json 2>&1 | grep -v -i "warn\|exe_args"
done
xz $OUT/*.json
