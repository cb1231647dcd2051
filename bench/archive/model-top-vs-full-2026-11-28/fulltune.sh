#!/usr/bin/env bash
# Does --model-top 10 leave a faster backward for the training step? One point, tuned as the peers
# run tunes it (catalog.db), then its whole backward space into a copy (full.db); the step timed
# with each catalog in turn against the peers, ROUNDS rounds (1 2; the session's rounds 3 and 4 ran
# the same loop by hand). SHAPE is POINT's swr-tune options (run.sh's shape_options).
set -uo pipefail
P=${POINT:-1x16x32768x128-causal}
SHAPE=${SHAPE:---batch 1 --heads 16 --seq 32768 --head-dim 128 --dtype bf16 --causal}
here=.device/peers
W=/tmp/swr-peers
export SWR_CACHE_DIR=$W/cubins HOME=$W/home SWR_DB=
if [[ $1 == tune ]]; then
  SWR_PEER_POINTS=$P OUT=$OUT bash $here/run.sh tune | tail -5
  cp $W/catalog.db $W/full.db
  start=$SECONDS
  timeout 420 $here/bin/swr-tune --family attention-backward --gpu auto $SHAPE --counters none \
    --db $W/full.db -j 16 > $OUT/full-tune.log 2>&1
  echo "full tune rc=$? $((SECONDS - start))s" | tee -a $OUT/full-tune.log
  for db in catalog full; do
    $here/bin/swr-tune show --family attention-backward --gpu auto --db $W/$db.db > $OUT/show-$db.txt 2>&1
  done
  head -12 $OUT/show-*.txt
  xz -f $OUT/full-tune.log
fi
if [[ $1 == peers ]]; then
  # The model-top catalog kept once: later rounds find catalog.db holding the full tune's.
  [[ -f $W/top.db ]] || cp $W/catalog.db $W/top.db
  for round in ${ROUNDS:-1 2}; do
    for db in top full; do
      cp $W/$db.db $W/catalog.db
      mkdir -p $OUT/$db-$round
      SWR_PEER_POINTS=$P OUT=$OUT/$db-$round bash $here/run.sh peers | tail -3
    done
  done
fi
