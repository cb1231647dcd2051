"""swr-tune jobs that compile what step_variants.py will run: per point of VARIANTS_JSON, one
line `family|shape options|--config ...` for its backward variants and one for the forward pick
its catalogs hold."""
import json
import os
import sqlite3
import sys

from make_catalogs import problem_key  # staged beside this script (run.sh)

variants = json.load(open(sys.argv[1]))
root = os.path.dirname(os.path.abspath(sys.argv[1]))
for point, entries in variants.items():
    dims, *rest = point.split("-")
    b, h, s, d = dims.split("x")
    opts = (f"--batch {b} --heads {h} --seq {s} --head-dim {d} --dtype bf16"
            + (" --causal" if rest[-1] == "causal" else ""))
    print("attention-backward|" + opts + "|" + " ".join("--config " + e["variant"] for e in entries))
    key = problem_key(point).removeprefix("bwd_")  # the forward's problem
    db = sqlite3.connect(os.path.join(root, entries[0]["catalog"]))
    forward = db.execute(
        "select c.key from current_measurements m join problems p on p.id = m.problem_id join "
        "configs c on c.id = m.config_id where p.key = ? and m.valid = 1 order by m.median_ms "
        "limit 1", (key,)).fetchone()[0]
    print("attention|" + opts + "|--config " + forward)
