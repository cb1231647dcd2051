#!/usr/bin/env bash
# Layout experiment: tune two points (call 1 only), then bench/backward_layout.py against the catalog.
bash .device/unpack.sh
nvidia-smi -L
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo NOT-H200; exit 0; }
P="1x16x32768x128-causal 2x16x16384x128-causal"
here=$PWD/.device/peers
if [[ ! -f /tmp/swr-peers/catalog.db ]]; then
  SWR_PEER_POINTS="$P" OUT=$OUT bash .device/peers/run.sh tune | tail -8
fi
if [[ -d .device/fa4b ]]; then
  ls /tmp/fa4/part.* >/dev/null && [[ ! -d /tmp/site/flash_attn ]] && cat /tmp/fa4/part.* .device/fa4b/part.* | xz -d -T8 | (mkdir -p /tmp/site && tar -C /tmp/site -xf -)
  export PYTHONPATH=/tmp/site/nvidia_cutlass_dsl/dsl_packages:/tmp/site
fi
export PYTHONUNBUFFERED=1 SWR_RUNTIME_LIBRARY=$here/lib/libswr_runtime.so SWR_CACHE_DIR=/tmp/swr-peers/cubins HOME=/tmp/swr-peers/home SWR_DB=
cd $here/bench
for r in ${ROUNDS:-1 2}; do
  PYTHONPATH=$here/python:${PYTHONPATH:-} timeout 250 python3 backward_layout.py --catalog /tmp/swr-peers/catalog.db --points $P --out $OUT/layout-$r-${TAG:-a}.json
done
