#!/usr/bin/env bash
# The tuner's A/B of several builds of swr-tune (bench/results/attention-backward-ws-h200/
# early-lse-2026-11-28): BINS names them, old = .device/peers/bin/swr-tune (staged at 1f5df72),
# any other NAME = .device/ab/NAME/swr-tune (stripped from a build with the change); they run in
# turn, ROUNDS times, each tuning the JOBS with --counters none into its own database. Staged as
# .device/ab/abn.sh; one device call, carry [.device/peers, .device/ab]:
#   BINS="old lse10 lse5" OUT=$OUT bash .device/ab/abn.sh
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:?}
W=/tmp/abn; mkdir -p $W/home; export HOME=$W/home SWR_DB=
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/cards.txt
# JOBS: "shape options|config keys" entries separated by ';' (default: the D128 causal points).
JOBS=${JOBS:-"--batch 2 --heads 16 --seq 16384 --head-dim 128|bwd-wgmma-m80n128w12s2-sawtooth-grid-head_major-pair-lag bwd-wgmma-m80n128w12s2-cyclic-grid-head_major-pair-lag;--batch 1 --heads 16 --seq 32768 --head-dim 128|bwd-wgmma-m80n128w12s2-sawtooth-grid-head_major-pair-lag bwd-wgmma-m80n128w12s2-cyclic-grid-head_major-pair-lag"}
for round in $(seq 1 ${ROUNDS:-2}); do
  for which in ${BINS:-old lse10 lse5}; do
    bin=$here/../peers/bin/swr-tune; [[ $which == old ]] || bin=$here/$which/swr-tune
    IFS=';' read -ra jobs <<<"$JOBS"
    for job in "${jobs[@]}"; do
      shape=${job%%|*}; configs=()
      for c in ${job#*|}; do configs+=(--config "$c"); done
      start=$SECONDS
      SWR_CACHE_DIR=$W/c-$which timeout 200 $bin --family attention-backward --gpu auto $shape \
        --dtype bf16 --causal "${configs[@]}" --counters none --db $OUT/$which-$round.db -j 16 < /dev/null > $W/tune.log 2>&1
      echo "$which round $round $shape rc=$? $((SECONDS-start)) s"
    done
  done
done
python3 - "$OUT" <<'PY'
import sqlite3, sys, glob, os, statistics
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.db"))):
    which, rnd = os.path.basename(path)[:-3].rsplit("-", 1)
    db = sqlite3.connect(path)
    for key, config, ms in db.execute("select p.key, c.key, m.median_ms from current_measurements m join problems p on p.id = m.problem_id join configs c on c.id = m.config_id where m.valid = 1"):
        rows.setdefault((key, config), {}).setdefault(which, []).append(ms)
for (key, config), by in sorted(rows.items()):
    old = statistics.mean(by["old"])
    print(key, config, " ".join(f"{w}={' '.join(f'{x:.3f}' for x in v)} ({statistics.mean(v)/old:.4f})" for w, v in by.items()))
PY
