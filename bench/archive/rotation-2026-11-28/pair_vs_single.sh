#!/usr/bin/env bash
bash .device/unpack.sh
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo NOT-H200; exit 0; }
ls /tmp/fa4/part.* >/dev/null && [[ ! -d /tmp/site/flash_attn ]] && cat /tmp/fa4/part.* .device/fa4b/part.* | xz -d -T8 | (mkdir -p /tmp/site && tar -C /tmp/site -xf -)
export HERE=$PWD/.device/peers
export PYTHONPATH=$HERE/python:/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site PYTHONUNBUFFERED=1
export SWR_RUNTIME_LIBRARY=$HERE/lib/libswr_runtime.so SWR_CACHE_DIR=/tmp/w/cubins HOME=/tmp/w/home SWR_DB=
mkdir -p /tmp/w/home; cp .device/pv/*.db /tmp/w/
$HERE/bin/swr-tune --family attention-backward --gpu auto --batch 1 --heads 16 --seq 32768 --head-dim 128 --dtype bf16 --causal --config bwd-wgmma-m80n128w12s2-sawtooth-grid-head_major-lag --counters none --db /tmp/w/single.db 2>&1 | grep -A3 "#  variant"
python3 .device/pv/exp.py /tmp/w/pair.db /tmp/w/single.db 2>&1 | grep -v -i "warn\|exe_args"
xz $OUT/*.json
