#!/usr/bin/env bash
# Issue 29 on a host of several GPUs: one GPU against --devices all, with L2 counters (batched
# where kernels are short), on three workloads. Staged like run.sh (bash stage.sh DEST, then on the
# GPU machine: cd DEST && OUT=... WORKLOADS="space plan" bash speedup.sh).
#   space: issue 18's 312-variant shape (kernels of ~0.03 ms), one GPU, all GPUs, twice each
#   plan:  plan8.json (4 attention + 4 GEMM shapes, 176 variants), one GPU, all GPUs
#   big:   B2 H16 S16384 D128 --both (367 variants of 3-7 ms), one GPU, all GPUs
# Every workload is compiled first (or, for the plan, tuned once into a scratch database), so the
# timed runs measure and do not compile. speedup_check.py reads the databases and logs and writes
# summary.txt/summary.json; logs and databases go to $OUT as two archives.
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$here/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d /tmp/speedup29.XXXXXX)
LOG=$WORK/logs
mkdir -p "$LOG" "$WORK/db"
TUNE=$here/bin/swr-tune
chmod +x "$TUNE"
export SWR_CACHE_DIR=$WORK/cubins XDG_CACHE_HOME=$WORK/xdg SWR_DB=
unset SWR_DEVICE SWR_LOCK_DIR SWR_COUNTER_BATCH SWR_COUNTERS_PER_VARIANT
DEADLINE=${DEADLINE:-540}
WORKLOADS=${WORKLOADS:-"space plan big"}
space=(--gpu h200 --seq 1024 --batch 4 --heads 8 --head-dim 64)
big=(--gpu h200 --batch 2 --heads 16 --seq 16384 --head-dim 128 --both)
plan=(--gpu h200 --plan "$here/plan8.json")
: >"$LOG/steps.tsv"

# step NAME COMMAND...: runs it within what the deadline leaves, logs to $LOG/NAME.{out,err},
# records "name rc seconds" in steps.tsv; a step that cannot start in time is recorded as skipped.
step() {
  local name=$1 left=$((DEADLINE - SECONDS))
  shift
  if ((left < 20)); then
    printf '%s\tskipped\t0\n' "$name" >>"$LOG/steps.tsv"
    return 0
  fi
  local start rc
  start=$(date +%s.%N)
  timeout -k 5 "$left" "$@" >"$LOG/$name.out" 2>"$LOG/$name.err"
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(awk -v a="$start" -v b="$(date +%s.%N)" \
    'BEGIN { printf "%.2f", b - a }')" >>"$LOG/steps.tsv"
  tail -n 1 "$LOG/steps.tsv"
}

nvidia-smi -L >"$LOG/nvidia-smi.txt" 2>&1
for workload in $WORKLOADS; do
  case $workload in
    space)
      step space "$TUNE" space "${space[@]}" --json
      step space_compile "$TUNE" compile "${space[@]}" --jobs "$(nproc)"
      for round in 1 2; do
        step "space_one_$round" "$TUNE" "${space[@]}" --devices 0 --db "$WORK/db/space_one_$round.db"
        step "space_all_$round" "$TUNE" "${space[@]}" --devices all --db "$WORK/db/space_all_$round.db"
      done
      ;;
    plan)
      step plan_compile "$TUNE" "${plan[@]}" --devices all --counters none --db "$WORK/db/scratch.db"
      step plan_one_1 "$TUNE" "${plan[@]}" --devices 0 --db "$WORK/db/plan_one_1.db"
      step plan_all_1 "$TUNE" "${plan[@]}" --devices all --db "$WORK/db/plan_all_1.db"
      ;;
    big)
      step big_space "$TUNE" space "${big[@]}" --json
      step big_compile "$TUNE" compile "${big[@]}" --jobs "$(nproc)"
      step big_one_1 "$TUNE" "${big[@]}" --devices 0 --db "$WORK/db/big_one_1.db"
      step big_all_1 "$TUNE" "${big[@]}" --devices all --db "$WORK/db/big_all_1.db"
      ;;
    *) echo "unknown workload '$workload': allowed space, plan, big" >&2 && exit 2 ;;
  esac
done
for db in "$WORK"/db/*.db; do
  "$TUNE" show --db "$db" --json >"$LOG/show_$(basename "$db" .db).json" 2>&1
done
python3 "$here/speedup_check.py" --work "$WORK" --plan "$here/plan8.json" --out "$OUT" \
  >"$LOG/check.out" 2>&1
cat "$LOG/check.out"
rm -f "$WORK"/db/*.db-wal "$WORK"/db/*.db-shm "$WORK/db/scratch.db"
tar -C "$WORK" -czf "$OUT/logs.tar.gz" logs
tar -C "$WORK" -czf "$OUT/databases.tar.gz" db
echo "total ${SECONDS}s"
