#!/usr/bin/env bash
# The hidden-steps experiment (bench/results/attention-backward-ws-h200/hidden-steps-2026-11-28):
# the backward GPU test's wgmma cases (FILTER) and the sanitizers on a build with one of this
# folder's patches applied, then the tuner's A/B of the old kernels (1f5df72) and the new ones at the
# two D128 causal points, old / new / old / new (AB=0: the checks only). Staged here as .device/ab
# (this script as run.sh, new/swr-tune and new/attention_backward_gpu_test stripped from the patched
# build) beside .device/peers (bench/backward_peers_device_run.sh stage, at 1f5df72); one device
# call, carry [.device/peers, .device/ab]:  OUT=$OUT bash .device/ab/run.sh
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:?}
W=/tmp/ab; mkdir -p $W/home; export HOME=$W/home SWR_DB=
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/cards.txt
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -1)
start=$SECONDS
SWR_CACHE_DIR=$W/c-test timeout 200 $here/new/attention_backward_gpu_test --gtest_filter="${FILTER:-*bwd_wgmma_*}" > $OUT/gpu-test.log 2>&1
echo "gpu test rc=$? $((SECONDS-start)) s"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" $OUT/gpu-test.log | head
for tool in racecheck synccheck; do
  start=$SECONDS
  SWR_CACHE_DIR=$W/c-san SWR_BACKWARD_FIRST_SHAPE_ONLY=1 timeout 150 $SAN --tool $tool --print-limit 20 \
    $here/new/attention_backward_gpu_test --gtest_filter='*pair*:*m80n128w12s2_cyclic_static_head_major_lag_d128_bf16_causal*' > $OUT/$tool.log 2>&1
  echo "$tool rc=$? $((SECONDS-start)) s: $(grep -hE 'RACECHECK SUMMARY|ERROR SUMMARY' $OUT/$tool.log | tr '\n' ' ') $(grep -hE '^\[  (PASSED|FAILED)  \]' $OUT/$tool.log | tr '\n' ' ')"
done
[[ ${AB:-1} == 1 ]] || exit 0
configs=(--config bwd-wgmma-m80n128w12s2-sawtooth-grid-head_major-pair-lag
  --config bwd-wgmma-m80n128w12s2-cyclic-grid-head_major-pair-lag
  --config bwd-wgmma-m64n128w12s2-sawtooth-grid-head_major-pair-lag
  --config bwd-wgmma-m80n128w12s2-sawtooth-grid-head_major-lag)
for round in 1 2; do
  for which in old new; do
    bin=$here/../peers/bin/swr-tune; [[ $which == new ]] && bin=$here/new/swr-tune
    for shape in "--batch 2 --heads 16 --seq 16384" "--batch 1 --heads 16 --seq 32768"; do
      start=$SECONDS
      SWR_CACHE_DIR=$W/c-$which timeout 200 $bin --family attention-backward --gpu auto $shape --head-dim 128 \
        --dtype bf16 --causal "${configs[@]}" --counters none --db $OUT/$which$round.db -j 16 < /dev/null > $W/tune-$which$round.log 2>&1
      echo "$which round $round $shape rc=$? $((SECONDS-start)) s"
    done
  done
done
python3 - "$OUT" <<'PY'
import sqlite3, sys, glob, os
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.db"))):
    db = sqlite3.connect(path)
    for key, config, ms in db.execute("select p.key, c.key, m.median_ms from current_measurements m join problems p on p.id = m.problem_id join configs c on c.id = m.config_id where m.valid = 1"):
        rows.setdefault((key, config), {})[os.path.basename(path)[:-3]] = ms
for (key, config), by in sorted(rows.items()):
    old = [by[k] for k in sorted(by) if k.startswith("old")]
    new = [by[k] for k in sorted(by) if k.startswith("new")]
    print(key, config, " ".join(f"{k}={by[k]:.3f}" for k in sorted(by)),
          f"new/old={sum(new)/len(new)/(sum(old)/len(old)):.4f}" if old and new else "")
PY
