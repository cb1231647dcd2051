#!/usr/bin/env bash
# Where a variant's time goes, one tuner alone vs --devices all (host_ms of the stored methods).
set -u
B=$PWD/.device/tuning-at-scale/bin/swr-tune; chmod +x "$B"
D=/tmp/diag18; rm -rf $D; mkdir -p $D; L=$OUT/diag; mkdir -p $L
export SWR_CACHE_DIR=$D/cubins XDG_CACHE_HOME=$D/xdg
SHAPE="--gpu h200 --seq 1024 --batch 4 --heads 8 --head-dim 64"
$B compile $SHAPE > $L/compile.log 2>&1
SWR_DEVICE=0 $B tune $SHAPE --db $D/one.db > $L/one.log 2>&1
$B tune $SHAPE --devices all --db $D/all.db > $L/all.log 2>&1
for db in one all; do
  python3 - $D/$db.db <<'PY' | tee $L/phases-$db.txt
import json, sqlite3, statistics, sys
rows = sqlite3.connect(sys.argv[1]).execute("select method from measurements").fetchall()
phases = {}
for (m,) in rows:
    for k, v in json.loads(m).get("host_ms", {}).items():
        phases.setdefault(k, []).append(v)
print(sys.argv[1], len(rows), "rows")
for k, v in sorted(phases.items()):
    print(f"  {k:18s} median {statistics.median(v):8.2f} ms  sum {sum(v)/1000:7.2f} s")
PY
done
grep -h "measured" $L/one.log $L/all.log
