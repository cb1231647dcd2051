#!/usr/bin/env bash
bash .device/unpack.sh
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo NOT-H200; exit 0; }
ls /tmp/fa4/part.* >/dev/null && [[ ! -d /tmp/site/flash_attn ]] && cat /tmp/fa4/part.* .device/fa4b/part.* | xz -d -T8 | (mkdir -p /tmp/site && tar -C /tmp/site -xf -)
here=$PWD/.device/peers
export PYTHONPATH=$here/python:/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site PYTHONUNBUFFERED=1
export SWR_RUNTIME_LIBRARY=$here/lib/libswr_runtime.so SWR_CACHE_DIR=/tmp/w/cubins HOME=/tmp/w/home SWR_DB=
mkdir -p /tmp/w/home; cd $here/bench
for r in 1 2; do
python3 training_host_share.py --catalog $here/catalog.db --points 1x16x32768x128-causal 2x16x16384x128-causal --runs 15 --out $OUT/host-share-$r.json 2>&1 | grep -v -i "warn\|exe_args"
done
