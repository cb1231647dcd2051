#!/usr/bin/env bash
# Issue 29 on one H200 (or H100): what batched L2 counters cost and whether they equal the counters
# of one profiling session per variant. Run from the repository root after building (or with
# SWR_TUNE naming a staged swr-tune, GPU_TEST the staged l2_counters_gpu_test); ~8 min with
# REPEAT=1 BIG=1.
#   bench/counters_batch_device_run.sh [OUT_DIR]        (default bench/results/counters-batch-h200)
# Steps, each timed:
#   1. issue 18's space (--gpu h200 --seq 1024 --batch 4 --heads 8 --head-dim 64, ~312 variants)
#      compiled once (warm cubin cache), then tuned twice into fresh databases: the default
#      (batches of kVariantsPerCounterBatch; kernels above kBatchedCountersUpToMs still counted one
#      session each) and SWR_COUNTER_BATCH=1 SWR_COUNTERS_PER_VARIANT=1 (one variant a request,
#      one profiling session each: the path before batches);
#   2. per-variant counter cost of each: the median of the rows' method.host_ms.counters (batched:
#      each variant's share of its batch's sessions), and the round trip of its worker request;
#   3. counters of the two databases compared config by config: sectors and misses within 1%;
#      with REPEAT=1, each of the two tunes runs a second time into its own database, and the
#      comparison is made for every pair: a method against itself gives the counters' own
#      run-to-run spread, the floor that the batched/per-variant difference is read against;
#   4. full tune of B2 H16 S16384 D128 (the shape's whole space, both instruction paths), as the
#      1m41s before issue 29 was taken: a fresh database and a fresh cubin cache (NVRTC compiles
#      inside the run), by default and per variant; BIG_ARGS adds options (e.g. --both: causal and
#      not, twice the work); BIG=0 leaves it out;
#   5. the gpu test comparing a batched session with one session per launch (if built).
# DEADLINE (seconds, default 500): a step is cut off at what is left of it less 30 s, and a step
# with under 30 s left is skipped, so that the summary is always written.
# Prints a summary at the end and keeps logs, databases and summary.txt in OUT_DIR.
set -uo pipefail
out=${1:-bench/results/counters-batch-h200}
mkdir -p "$out"
out=$(cd "$out" && pwd)
swr=${SWR_TUNE:-build/swr-tune}
gpu_test=${GPU_TEST:-build/tests/gpu/l2_counters_gpu_test}
gpu=${GPU:-h200}
deadline=${DEADLINE:-500}
cubins=${SWR_CACHE_DIR:-$out/cubins}
export SWR_CACHE_DIR=$cubins SWR_DB=
unset SWR_COUNTERS_PER_VARIANT SWR_COUNTER_BATCH
per_variant=(env SWR_COUNTER_BATCH=1 SWR_COUNTERS_PER_VARIANT=1)
space=(--gpu "$gpu" --seq 1024 --batch 4 --heads 8 --head-dim 64)
read -ra big_args <<<"${BIG_ARGS:-}"
big=(--gpu "$gpu" --batch 2 --heads 16 --seq 16384 --head-dim 128 "${big_args[@]}")
: >"$out/timings.txt"
nvidia-smi -L >"$out/gpu.txt" 2>&1
nvidia-smi --query-gpu=driver_version --format=csv,noheader >>"$out/gpu.txt" 2>&1

timed() {  # timed LABEL COMMAND...: runs it, logs it, appends "LABEL seconds exit" to timings.txt
  local label=$1 left=$((deadline - SECONDS - 30))
  shift
  if ((left < 1)); then
    echo "$label skipped (deadline)" | tee -a "$out/timings.txt"
    return 0
  fi
  local start end code
  start=$(date +%s.%N)
  timeout -k 5 "$left" "$@" >"$out/$label.log" 2>&1
  code=$?
  end=$(date +%s.%N)
  ((code == 0)) || { tail -20 "$out/$label.log"; echo "$label: exit $code" >&2; }
  awk -v l="$label" -v s="$start" -v e="$end" -v c="$code" 'BEGIN { printf "%s %.1f s (exit %d)\n", l, e - s, c }' |
    tee -a "$out/timings.txt"
}

rm -f "$out"/*.db "$out"/*.db-wal "$out"/*.db-shm
timed compile_space "$swr" compile "${space[@]}"
timed space_batched "$swr" tune "${space[@]}" --db "$out/space_batched.db"
timed space_per_variant "${per_variant[@]}" "$swr" tune "${space[@]}" \
  --db "$out/space_per_variant.db"
if [[ ${REPEAT:-0} == 1 ]]; then
  timed space_batched_again "$swr" tune "${space[@]}" --db "$out/space_batched_again.db"
  timed space_per_variant_again "${per_variant[@]}" "$swr" tune "${space[@]}" \
    --db "$out/space_per_variant_again.db"
fi
if [[ -x $gpu_test ]]; then
  timed gpu_test_batched_vs_alone "$gpu_test" --gtest_filter='*Batch*'
fi
if [[ ${BIG:-1} == 1 ]]; then
  # Each with a cubin cache of its own, empty: compiling is part of the time, as in the 1m41s.
  timed big_batched env SWR_CACHE_DIR="$cubins/big_batched" "$swr" tune "${big[@]}" \
    --db "$out/big_batched.db"
  timed big_per_variant env SWR_CACHE_DIR="$cubins/big_per_variant" "${per_variant[@]}" \
    "$swr" tune "${big[@]}" --db "$out/big_per_variant.db"
fi

python3 - "$out" <<'PY' | tee "$out/summary.txt"
import json, os, sqlite3, statistics, sys
out = sys.argv[1]

def rows(db):
    con = sqlite3.connect(f"file:{out}/{db}?mode=ro", uri=True)
    q = ("SELECT p.key || ' ' || c.key, m.status, m.l2_sectors_from_tex, m.l2_sector_misses,"
         " m.dram_read_bytes, m.median_ms, m.method, m.counter_status FROM current_measurements cur"
         " JOIN measurements m ON m.id = cur.measurement_id JOIN configs c ON c.id = cur.config_id"
         " JOIN problems p ON p.id = cur.problem_id")
    return {key: dict(status=s, sectors=sec, misses=mis, dram=dr, ms=ms, method=json.loads(me),
                      counter_status=cs)
            for key, s, sec, mis, dr, ms, me, cs in con.execute(q)}

def cost(db):
    if not os.path.exists(f"{out}/{db}"):
        return None
    r = rows(db)
    host = [v["method"].get("host_ms", {}) for v in r.values()]
    counters = [h["counters"] for h in host if h.get("counters") is not None]
    trips = [h.get("round_trip_batch") or h.get("round_trip") for h in host]
    trips = [t for t in trips if t is not None]
    with_counters = sum(1 for v in r.values() if v["counter_status"] == "collected")
    ok = sum(1 for v in r.values() if v["status"] == "ok")
    batched = [v["method"]["counter_batch"] for v in r.values() if "counter_batch" in v["method"]]
    fallbacks = sorted({b["fallback"] for b in batched if "fallback" in b})
    print(f"{db}: {len(r)} variants ({ok} ok, {with_counters} with counters, "
          f"{len(batched)} counted in a batch)")
    if counters:
        print(f"  counters a variant (host_ms.counters): median {statistics.median(counters):.1f} ms,"
              f" mean {statistics.mean(counters):.1f}, max {max(counters):.1f}")
    if trips:
        print(f"  round trip of the variant's worker request (host_ms; batched: the whole request"
              f" of up to 32 variants): median {statistics.median(trips):.1f} ms")
    for reason in fallbacks:
        print(f"  fallback: {reason}")
    best = {}
    for key, v in r.items():
        problem, config = key.split(" ", 1)
        if v["status"] == "ok" and v["ms"] is not None and (
                problem not in best or v["ms"] < best[problem][1]):
            best[problem] = (config, v["ms"])
    for problem, (config, ms) in sorted(best.items()):
        print(f"  best {problem}: {config} {ms:.4f} ms")
    return r

print("== timings"); print(open(f"{out}/timings.txt").read().rstrip())
print("== per-variant counter cost (issue 29 target: <= 10 ms median batched)")
a = cost("space_batched.db"); b = cost("space_per_variant.db")
a2, b2 = cost("space_batched_again.db"), cost("space_per_variant_again.db")  # with REPEAT=1
big_a, big_b = cost("big_batched.db"), cost("big_per_variant.db")  # absent with BIG=0
def rel(x, y):
    return abs(x - y) / max(abs(x), abs(y), 1.0)

def compare(title, a, b):
    print(f"== {title} (target: within 1%, sectors and misses)")
    sec, mis, off = [], [], []
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        if None in (x["sectors"], y["sectors"], x["misses"], y["misses"]):
            continue
        ds, dm = rel(x["sectors"], y["sectors"]), rel(x["misses"], y["misses"])
        sec.append(ds)
        mis.append(dm)
        if ds > 0.01 or dm > 0.01:
            off.append((max(ds, dm), key, x["sectors"], y["sectors"], x["misses"], y["misses"]))
    if not sec:
        print("nothing to compare")
        return
    q = lambda v, f: 100 * sorted(v)[min(len(v) - 1, int(f * len(v)))]
    print(f"{len(sec)} configs compared; {len(off)} beyond 1% in either "
          f"({sum(d > 0.01 for d in sec)} in sectors, {sum(d > 0.01 for d in mis)} in misses)")
    for name, v in (("sectors", sec), ("misses", mis)):
        print(f"  {name}: median {100 * statistics.median(v):.2f}%, p90 {q(v, 0.9):.2f}%, "
              f"worst {100 * max(v):.2f}%")
    for d, key, s1, s2, m1, m2 in sorted(off, reverse=True)[:8]:
        print(f"  {100*d:6.2f}%  {key}: sectors {s1:.0f} vs {s2:.0f}, misses {m1:.0f} vs {m2:.0f}")

if a is not None and b is not None:
    compare("batched vs per-variant counters, same config", a, b)
if b2 is not None:
    compare("per-variant vs per-variant again (the counters' own spread)", b, b2)
if a2 is not None:
    compare("batched vs batched again", a, a2)
if a2 is not None and b2 is not None:
    compare("batched again vs per-variant again", a2, b2)
if a2 is not None and b is not None:
    compare("batched again vs per-variant", a2, b)
if big_a is not None and big_b is not None:
    compare("big shape: default vs one session per variant", big_a, big_b)
PY
echo "logs, databases and summary.txt in $out"
