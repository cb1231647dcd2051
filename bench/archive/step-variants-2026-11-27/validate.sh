#!/usr/bin/env bash
# The tuner's ranking of each point's four variants, old timing (13fac99: each variant back to
# back) against new (the power load between runs), in rounds old, new, old, new.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=/tmp/swr-validate
mkdir -p "$W/home"
export HOME=$W/home SWR_CACHE_DIR=$W/cubins SWR_DB=
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/cards.txt"
"$here/bin/power_load_gpu_test" > "$OUT/power_load_gpu_test.txt" 2>&1; tail -3 "$OUT/power_load_gpu_test.txt"
s=$here/sources
python3 "$here/make_catalogs.py" "$W/catalogs" 4 2x16x16384x128-causal=$s/gpu3.db \
  1x16x32768x128-causal=$s/gpu3.db 2x32x16384x64-noncausal=$s/gpu0.db \
  1x32x32768x64-causal=$s/gpu1.db 2x16x16384x128-noncausal=$s/gpu2.db
python3 - "$W/catalogs/variants.json" > "$W/jobs.txt" <<'PY'
import json, sys
for point, entries in json.load(open(sys.argv[1])).items():
    dims, *rest = point.split("-")
    b, h, s, d = dims.split("x")
    opts = f"--batch {b} --heads {h} --seq {s} --head-dim {d} --dtype bf16" + (" --causal" if rest[-1] == "causal" else "")
    print(point + "|" + opts + "|" + " ".join("--config " + e["variant"] for e in entries))
PY
for round in 1 2; do
  for build in old new; do
    while IFS='|' read -r point opts configs; do
      timeout 120 "$here/bin/swr-tune-$build" --family attention-backward --gpu auto $opts $configs \
        --counters none --db "$W/$build-$round.db" -j 16 > "$W/$build-$round-$point.log" 2>&1
      echo "$build round $round $point rc=$?"
    done < "$W/jobs.txt"
  done
done
python3 - "$W"/*.db > "$OUT/rankings.txt" <<'PY'
import os, sqlite3, sys
for path in sys.argv[1:]:
    rows = sqlite3.connect(path).execute(
        "select p.key, c.key, m.median_ms from current_measurements m join problems p on "
        "p.id = m.problem_id join configs c on c.id = m.config_id where m.valid = 1 "
        "order by p.key, m.median_ms").fetchall()
    for problem, config, ms in rows:
        print(f"{os.path.basename(path)[:-3]:6s} {problem:50s} {config:60s} {ms:8.3f}")
PY
cat "$OUT/rankings.txt"
tar -C "$W" -czf "$OUT/validate.tar.gz" $(cd "$W" && ls *.log *.db)
