#!/usr/bin/env bash
# Issue 18 on a 2xH200 host (works, and says what it could check, on one GPU): tuning at scale with
# the staged swr-tune (bin/swr-tune: bash stage.sh DEST). Expected duration ~4-5 min, bounded at
# ~8.5 min by a deadline that shortens or skips the last steps.
#   1. compile the speedup shape's whole space once (warm cubin cache)            ~30 s
#   2. that space tuned on one GPU (--devices 0), then on all (--devices all)      ~60 s + ~35 s
#   3. two tuners started on GPU 0 at once (+ a third with --no-wait)            ~25 s
#   4. a planted fault on all GPUs (the worker restarts, no GPU dropped)          ~10 s
#   5. a plan of 8 shapes (4 attention, 4 GEMM) with --devices all                ~45 s
#   6. the same plan as 2 shards (one per GPU, at once), merged with import       ~40 s
# then check.py reads the databases (SQL) and the logs and prints the summary table.
# Logs and databases go to $OUT (logs.tar.gz, databases.tar.gz, summary.txt, summary.json).
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$here/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d /tmp/scale18.XXXXXX)
LOG=$WORK/logs
mkdir -p "$LOG" "$WORK/db"
TUNE=$here/bin/swr-tune
chmod +x "$TUNE"
export SWR_CACHE_DIR=$WORK/cubins XDG_CACHE_HOME=$WORK/xdg SWR_DB=
unset SWR_DEVICE SWR_LOCK_DIR  # the default lock directory, /tmp/swr-gpu-locks
DEADLINE=${DEADLINE:-500}      # seconds for the steps; check and packing come after
export SHAPE=${SHAPE:-"--gpu h200 --seq 1024 --batch 4 --heads 8 --head-dim 64"}  # speedup shape
export TUNE WORK LOG PLAN=$here/plan8.json
STEPS=$LOG/steps.tsv
: >"$STEPS"

now() { date +%s.%N; }
seconds_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# What a step left running when its time ran out (swr-tune started on $WORK's files): ended by id.
end_leftovers() {
  local pids
  pids=$(pgrep -f -- "$WORK/db/" || true)
  [[ -n $pids ]] && kill -9 $pids 2>/dev/null
  return 0
}
# step NAME CAP COMMAND...: runs it with a time limit (CAP, or what the deadline leaves), logs
# stdout/stderr to $LOG/NAME.{out,err}, records name, exit code, seconds; never stops the script.
step() {
  local name=$1 cap=$2
  shift 2
  local left=$((DEADLINE - SECONDS))
  if ((left < 20)); then
    printf '%s\tskipped\t0\n' "$name" >>"$STEPS"
    echo "== $name: skipped (deadline)"
    return 0
  fi
  ((cap > left)) && cap=$left
  echo "== $name (limit ${cap}s)"
  local start end rc
  start=$(now)
  timeout -k 5 "$cap" "$@" >"$LOG/$name.out" 2>"$LOG/$name.err"
  rc=$?
  end=$(now)
  end_leftovers
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(seconds_between "$start" "$end")" >>"$STEPS"
  echo "   rc=$rc $(seconds_between "$start" "$end")s; $(tail -n 1 "$LOG/$name.out")"
}

nvidia-smi -L >"$LOG/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.max.sm --format=csv >>"$LOG/nvidia-smi.txt" 2>&1
NGPU=$(grep -c '^GPU ' "$LOG/nvidia-smi.txt")
echo "GPUs: $NGPU"
cat "$LOG/nvidia-smi.txt"
step gpus 30 "$TUNE" gpus
step space 30 "$TUNE" space $SHAPE --json

# 1-2. One shape's whole space: compiled once, then on one GPU, then on all.
step compile 150 "$TUNE" compile $SHAPE --jobs "$(nproc)"
step tune_one_gpu 200 "$TUNE" $SHAPE --devices 0 --db "$WORK/db/one_gpu.db"
if ((NGPU > 1)); then
  step tune_all_gpus 150 "$TUNE" $SHAPE --devices all --db "$WORK/db/all_gpus.db"
fi

# 3. Two tuners on GPU 0: the first holds it, the second waits; a third with --no-wait fails.
lock_test() {
  local first second
  "$TUNE" $SHAPE --devices 0 --limit 50 --db "$WORK/db/lock_first.db" \
    >"$LOG/lock_first.out" 2>"$LOG/lock_first.err" &
  first=$!
  sleep 3
  "$TUNE" $SHAPE --devices 0 --limit 5 --no-wait --db "$WORK/db/lock_nowait.db" \
    >"$LOG/lock_nowait.out" 2>"$LOG/lock_nowait.err"
  echo "nowait_rc=$?"
  "$TUNE" $SHAPE --devices 0 --limit 50 --db "$WORK/db/lock_second.db" \
    >"$LOG/lock_second.out" 2>"$LOG/lock_second.err"
  echo "second_rc=$?"
  wait "$first"
  echo "first_rc=$?"
}
export -f lock_test
step lock 120 bash -c lock_test

# 4. A planted fault (the kernel writes to an illegal address) with every GPU measuring.
step fault 90 "$TUNE" $SHAPE --devices all --plant-fault --limit 10 \
  --db "$WORK/db/fault.db"

# 5-6. A plan of 8 shapes on all GPUs, then as 2 shards (one per GPU when there are two) merged.
step plan_all 150 "$TUNE" --gpu h200 --plan "$PLAN" --devices all \
  --db "$WORK/db/plan_all.db"
shards() {
  local second_device=$(($1 > 1 ? 1 : 0)) a b
  "$TUNE" --gpu h200 --plan "$PLAN" --devices 0 --shard 0/2 --db "$WORK/db/shard0.db" \
    >"$LOG/shard0.out" 2>"$LOG/shard0.err" &
  a=$!
  "$TUNE" --gpu h200 --plan "$PLAN" --devices "$second_device" --shard 1/2 \
    --db "$WORK/db/shard1.db" >"$LOG/shard1.out" 2>"$LOG/shard1.err" &
  b=$!
  wait "$a"
  echo "shard0_rc=$?"
  wait "$b"
  echo "shard1_rc=$?"
}
export -f shards
step shards 150 bash -c "shards $NGPU"
step import 60 "$TUNE" import --db "$WORK/db/merged.db" "$WORK/db/shard0.db" "$WORK/db/shard1.db"
for db in one_gpu all_gpus plan_all merged shard0 shard1; do
  [[ -f $WORK/db/$db.db ]] && "$TUNE" show --db "$WORK/db/$db.db" --json >"$LOG/show_$db.json" 2>&1
done

python3 "$here/check.py" --work "$WORK" --gpus "$NGPU" --out "$OUT" >"$LOG/check.out" 2>&1
echo "check.py rc=$?" >>"$LOG/check.out"
tar -C "$WORK" -czf "$OUT/logs.tar.gz" logs
tar -C "$WORK" -czf "$OUT/databases.tar.gz" db
cat "$LOG/check.out"
echo "total ${SECONDS}s"
