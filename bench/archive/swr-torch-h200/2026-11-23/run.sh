#!/bin/bash
# One device call (issue 15, second part), from binaries built on the CPU machine and staged in $D:
# tunes (swr-tune, restricted key lists) the pytest shapes and the peer grid's shapes into a copy of
# the H200 GEMM sweep database, then the runtime's GPU test of prepared launches, the pytest GPU
# tests, the overhead benchmark with this branch's package and with main's (before), and the peer
# grid through the package. Each step has a time limit; no step starts past $BUDGET seconds.
# With $TUNED (a database from an earlier call) the grid's shapes are not tuned again: it is the
# grid's catalog. Logs and the grid's output are packed into $OUT/run.tgz.
set -u
D=$(cd "${D:-.device/torch-15b}" && pwd)
export PYTHONUNBUFFERED=1 SWR_RUNTIME_LIBRARY="$D/lib/libswr_runtime.so"
export SWR_CACHE_DIR=/tmp/swr-cubins HOME=/tmp/home-t15b SWR_SOURCE_DIR=$PWD
mkdir -p "$HOME" "$OUT/logs"
BUDGET=${BUDGET:-480}
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS left=$((BUDGET - SECONDS))
  if ((left < 8)); then echo "$name skipped (budget)" | tee -a "$OUT/steps.txt"; return; fi
  ((limit > left)) && limit=$left
  timeout "$limit" "$@" > "$OUT/logs/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - start))s" | tee -a "$OUT/steps.txt"
}
DB=/tmp/tuned.db
cp "$PWD/bench/results/gemm-sweep-h200/gemm.db" $DB
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > $OUT/env.txt
python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())' >> $OUT/env.txt 2>&1

# The pytest shapes, with the four variants of the first run (bench/results/swr-torch-h200/run.sh).
SMALL=(--config m128n64w4s2-cyclic-grid-head_major m128n64w4s2-cyclic-dynamic-head_major m128n64w8s2-cyclic-grid-head_major m128n64w8s2-cyclic-dynamic-head_major)
step tune_b2_h4_s512_f16 25 "$D/swr-tune" --gpu auto --batch 2 --heads 4 --seq 512 --both "${SMALL[@]}" --db $DB -j 16
step tune_b2_h4_s512_bf16 25 "$D/swr-tune" --gpu auto --batch 2 --heads 4 --seq 512 --dtype bf16 --both "${SMALL[@]}" --db $DB -j 16
step tune_b16_h8_s777 20 "$D/swr-tune" --gpu auto --batch 16 --heads 8 --seq 777 "${SMALL[@]}" --db $DB -j 16
TEST_DB=/tmp/test.db  # the pytest catalog: D128 f16 stays untuned there (the fallback test's shape)
cp $DB $TEST_DB

# The peer grid's shapes: the key lists of bench/wgmma_attention_device_run.sh (the wgmma path's
# best at two shapes there) plus the mma_sync sawtooth variant the earlier grid ran.
K128=(wgmma-m128n128s2-ov-pp-cyclic-grid-head_major wgmma-m128n176s2-ov-pp-cyclic-grid-head_major
      wgmma-m128n160s2-ov-pp-cyclic-grid-head_major wgmma-m128n128s2-ov-cyclic-grid-head_major
      wgmma-m128n176s2-ov-cyclic-grid-head_major wgmma-m128n128s2-ov-pp-cyclic-static-head_major
      wgmma-m128n128s2-ov-pp-sawtooth-grid-head_major m128n128w8s2-cyclic-grid-head_major
      m128n64w4s2-cyclic-grid-head_major m128n64w4s2-sawtooth-grid-head_major)
K64=(wgmma-m192n192s2-cyclic-grid-head_major wgmma-m192n160s2-cyclic-grid-head_major
     wgmma-m192n128s2-ov-cyclic-grid-head_major wgmma-m128n192s2-ov-pp-cyclic-grid-head_major
     wgmma-m128n128s2-ov-pp-cyclic-grid-head_major wgmma-m192n192s3-cyclic-grid-head_major
     m128n128w8s2-cyclic-grid-head_major m128n64w4s2-cyclic-grid-head_major
     m128n64w4s2-sawtooth-grid-head_major)
TUNE_END=$((SECONDS + ${TUNE_SECONDS:-190}))
if [[ -n ${TUNED:-} ]]; then cp "$TUNED" $DB; TUNE_END=0; fi
grid_tune() {  # B H S D DTYPE
  local keys args=()
  if [[ $4 == 128 ]]; then keys=("${K128[@]}"); else keys=("${K64[@]}"); fi
  for k in "${keys[@]}"; do args+=(--config "$k"); done
  local left=$((TUNE_END - SECONDS))
  if ((left < 5)); then echo "tune_b$1_h$2_s$3_d$4_$5 skipped (tuning time)" >> "$OUT/steps.txt"; return; fi
  step "tune_b$1_h$2_s$3_d$4_$5" $((left < 30 ? left : 30)) "$D/swr-tune" --gpu h200 --batch "$1" --heads "$2" \
    --seq "$3" --head-dim "$4" --dtype "$5" --both --db $DB -j 16 "${args[@]}"
}
for s in 512 1024 2048 4096 8192; do
  for d in 64 128; do for t in f16 bf16; do grid_tune $((16384 / s)) 16 $s $d $t; done; done
done
for s in 16384 32768; do for d in 64 128; do grid_tune 8 1 $s $d f16; done; done
"$D/swr-tune" show --gpu h200 --db $DB > "$OUT/logs/show.log" 2>&1

step runtime_gpu_test 60 "$D/runtime_gpu_test" '--gtest_filter=RuntimeOnGpu.*:-RuntimeOnGpu.TheExample*'
export SWR_TORCH_TEST_CATALOG=$TEST_DB
step pytest 90 bash -c "cd '$D/tests/python' && python3 -m pytest -q -rs -p no:cacheprovider test_swr_torch.py test_swr_inputs.py"
step overhead 45 env PYTHONPATH="$D/python:$D/bench" python3 "$D/bench/swr_torch_overhead.py" --catalog $TEST_DB --out "$OUT/overhead.json"
step overhead_before 45 env PYTHONPATH="$D/before/python:$D/before/bench" python3 "$D/before/bench/swr_torch_overhead.py" --catalog $TEST_DB --out "$OUT/overhead_before.json"
GRID_BUDGET=$((BUDGET - SECONDS - 40))
step peer_grid $((GRID_BUDGET + 35)) env PYTHONPATH="$D/python:$D/bench" python3 "$D/bench/peer_grid.py" --gpu h200 --catalog $DB --swr-tune "$D/swr-tune" --regimes short long --time-budget $GRID_BUDGET --out "$OUT/peer-grid"
[[ -z ${TUNED:-} ]] && cp $DB "$OUT/tuned.db"
tar -czf "$OUT/run.tgz" -C "$OUT" logs peer-grid steps.txt
tail -n 3 "$OUT/logs/runtime_gpu_test.log" "$OUT/logs/pytest.log"; grep -A12 figures_us "$OUT/overhead.json"; grep -A8 figures_us "$OUT/overhead_before.json"
tail -12 "$OUT/logs/peer_grid.log"
