#!/usr/bin/env bash
# Issue 29 on one H200 (or H100): what batched L2 counters cost and whether they equal the counters
# of one profiling session per variant. Run from the repository root after building (or with
# SWR_TUNE naming a staged swr-tune); takes ~5-10 min.
#   bench/counters_batch_device_run.sh [OUT_DIR]        (default bench/results/counters-batch-h200)
# Steps, each timed:
#   1. issue 18's space (--gpu h200 --seq 1024 --batch 4 --heads 8 --head-dim 64, ~312 variants)
#      compiled once (warm cubin cache), then tuned twice into fresh databases: batched counters
#      (the default) and SWR_COUNTERS_PER_VARIANT=1 (one profiling session per variant, as before);
#   2. per-variant counter cost of each: the median of the rows' method.host_ms.counters (batched:
#      each variant's share of its batch's sessions), and of the whole measurement (round trip);
#   3. counters of the two databases compared config by config: sectors and misses within 1%;
#   4. full tune of B2 H16 S16384 D128 (--both: causal and not), batched and per variant, timed
#      (before issue 29: 1m41s);
#   5. the gpu test comparing a batched session with one session per launch (if built).
# Prints a summary at the end and keeps logs, databases and summary.txt in OUT_DIR.
set -uo pipefail
out=${1:-bench/results/counters-batch-h200}
mkdir -p "$out"
out=$(cd "$out" && pwd)
swr=${SWR_TUNE:-build/swr-tune}
gpu=${GPU:-h200}
export SWR_CACHE_DIR=${SWR_CACHE_DIR:-$out/cubins} SWR_DB=
unset SWR_COUNTERS_PER_VARIANT
space=(--gpu "$gpu" --seq 1024 --batch 4 --heads 8 --head-dim 64)
big=(--gpu "$gpu" --batch 2 --heads 16 --seq 16384 --head-dim 128 --both)
: >"$out/timings.txt"

timed() {  # timed LABEL COMMAND...: runs it, logs it, appends "LABEL seconds exit" to timings.txt
  local label=$1
  shift
  local start end code
  start=$(date +%s.%N)
  "$@" >"$out/$label.log" 2>&1
  code=$?
  end=$(date +%s.%N)
  ((code == 0)) || { tail -20 "$out/$label.log"; echo "$label: exit $code" >&2; }
  awk -v l="$label" -v s="$start" -v e="$end" -v c="$code" 'BEGIN { printf "%s %.1f s (exit %d)\n", l, e - s, c }' |
    tee -a "$out/timings.txt"
}

rm -f "$out"/*.db "$out"/*.db-wal "$out"/*.db-shm
timed compile_space "$swr" compile "${space[@]}"
timed space_batched env SWR_COUNTER_BATCH=32 "$swr" tune "${space[@]}" --db "$out/space_batched.db"
timed space_per_variant env SWR_COUNTERS_PER_VARIANT=1 "$swr" tune "${space[@]}" \
  --db "$out/space_per_variant.db"
timed big_batched env SWR_COUNTER_BATCH=32 "$swr" tune "${big[@]}" --db "$out/big_batched.db"
timed big_per_variant env SWR_COUNTERS_PER_VARIANT=1 "$swr" tune "${big[@]}" \
  --db "$out/big_per_variant.db"
if [[ -x build/tests/gpu/l2_counters_gpu_test ]]; then
  timed gpu_test_batched_vs_alone build/tests/gpu/l2_counters_gpu_test \
    --gtest_filter='*Batch*'
fi

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, sqlite3, statistics, sys
out = sys.argv[1]

def rows(db):
    con = sqlite3.connect(f"file:{out}/{db}?mode=ro", uri=True)
    q = ("SELECT c.key, m.status, m.l2_sectors_from_tex, m.l2_sector_misses, m.dram_read_bytes,"
         " m.method, m.counter_status FROM current_measurements cur"
         " JOIN measurements m ON m.id = cur.measurement_id JOIN configs c ON c.id = cur.config_id")
    return {(key): dict(status=s, sectors=sec, misses=mis, dram=dr, method=json.loads(me),
                        counter_status=cs)
            for key, s, sec, mis, dr, me, cs in con.execute(q)}

def cost(db):
    r = rows(db)
    counters = [v["method"].get("host_ms", {}).get("counters") for v in r.values()]
    counters = [c for c in counters if c is not None]
    trips = [v["method"].get("host_ms", {}).get("round_trip_batch") or
             v["method"].get("host_ms", {}).get("round_trip") for v in r.values()]
    trips = [t for t in trips if t is not None]
    with_counters = sum(1 for v in r.values() if v["counter_status"] == "collected")
    ok = sum(1 for v in r.values() if v["status"] == "ok")
    print(f"{db}: {len(r)} variants ({ok} ok, {with_counters} with counters); "
          f"counters per variant median {statistics.median(counters):.1f} ms "
          f"(mean {statistics.mean(counters):.1f}, max {max(counters):.1f}) from host_ms.counters"
          if counters else f"{db}: no host_ms.counters")
    return r

print("== timings"); print(open(f"{out}/timings.txt").read().rstrip())
print("== per-variant counter cost (issue 29 target: <= 10 ms median batched)")
a = cost("space_batched.db"); b = cost("space_per_variant.db")
cost("big_batched.db"); cost("big_per_variant.db")
print("== batched vs per-variant counters, same config (target: within 1%, sectors and misses)")
def rel(x, y):
    return abs(x - y) / max(abs(x), abs(y), 1.0)
compared = worst_sec = worst_mis = 0.0
off = []
for key in sorted(set(a) & set(b)):
    x, y = a[key], b[key]
    if None in (x["sectors"], y["sectors"], x["misses"], y["misses"]):
        continue
    compared += 1
    ds, dm = rel(x["sectors"], y["sectors"]), rel(x["misses"], y["misses"])
    worst_sec, worst_mis = max(worst_sec, ds), max(worst_mis, dm)
    if ds > 0.01 or dm > 0.01:
        off.append((max(ds, dm), key, x["sectors"], y["sectors"], x["misses"], y["misses"]))
print(f"{int(compared)} configs compared; worst difference: sectors {100*worst_sec:.2f}%, "
      f"misses {100*worst_mis:.2f}%; {len(off)} beyond 1%")
for d, key, s1, s2, m1, m2 in sorted(off, reverse=True)[:20]:
    print(f"  {100*d:6.2f}%  {key}: sectors {s1:.0f} vs {s2:.0f}, misses {m1:.0f} vs {m2:.0f}")
PY
echo "logs, databases and summary.txt in $out"
