#!/bin/bash
# swr.torch on a GPU (issue 15): tune a few small shapes into a copy of the H200 GEMM sweep
# database, then the pytest GPU tests, the overhead benchmark and a head-to-head with the peers.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export PYTHONUNBUFFERED=1 LD_LIBRARY_PATH="$HERE/lib:${LD_LIBRARY_PATH:-}"
export SWR_RUNTIME_LIBRARY="$HERE/lib/libswr_runtime.so" PYTHONPATH="$HERE/python:$HERE/bench"
cp -r "$HERE/cubins" /tmp/swr-cubins  # compiled on the build machine: no NVRTC wait here
export SWR_CACHE_DIR=/tmp/swr-cubins HOME=/tmp/home-p15
mkdir -p $HOME
DB=/tmp/tuned.db
cp "$REPO/bench/results/gemm-sweep-h200/gemm.db" $DB
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/env.txt
python3 -c 'import torch; print(torch.__version__, torch.version.cuda)' >> $OUT/env.txt 2>&1
CONFIGS=(--config m128n64w4s2-cyclic-grid-head_major m128n64w4s2-cyclic-dynamic-head_major m128n64w8s2-cyclic-grid-head_major m128n64w8s2-cyclic-dynamic-head_major)
tune() { echo "== tune $*" >> $OUT/tune.log; timeout 20 "$HERE/swr-tune" --gpu auto "$@" "${CONFIGS[@]}" --db $DB -j 16 >> $OUT/tune.log 2>&1; echo "== exit $?" >> $OUT/tune.log; }
tune --batch 2 --heads 4 --seq 512 --both
tune --batch 2 --heads 4 --seq 512 --dtype bf16 --both
tune --batch 16 --heads 8 --seq 777
"$HERE/swr-tune" show --gpu h200 --db $DB 2>&1 | grep -v "^m[0-9]" | head -30 >> $OUT/tune.log
export SWR_TORCH_TEST_CATALOG=$DB
cd "$HERE/tests"
timeout 95 python3 -m pytest -q -rs -p no:cacheprovider test_swr_torch.py test_swr_inputs.py > $OUT/pytest.log 2>&1; echo "pytest exit $?" >> $OUT/pytest.log
cd "$HERE"
timeout 35 python3 bench/swr_torch_overhead.py --catalog $DB --out $OUT/overhead.json > $OUT/overhead.log 2>&1; echo "overhead exit $?" >> $OUT/overhead.log
timeout 40 python3 bench/attention_vs_pytorch.py --catalog $DB --shapes 16x8x777 2x4x512 --head-dims 64 --out /tmp/peers > $OUT/peers.log 2>&1; echo "peers exit $?" >> $OUT/peers.log
cp /tmp/peers/results.json $OUT/peers.json 2>/dev/null
tail -5 $OUT/tune.log; tail -15 $OUT/pytest.log; tail -12 $OUT/overhead.log; tail -12 $OUT/peers.log
