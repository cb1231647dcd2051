"""Catalogs of one backward variant each: for every point, the tune's catalog with every other
backward measurement of that point deleted (the forward pick kept), so that swr.torch runs that
variant. Writes DEST/<point>/<rank>.db and DEST/variants.json.

    python3 make_catalogs.py DEST TOP point=catalog.db ...
"""
import json
import os
import shutil
import sqlite3
import sys


def problem_key(point):
    dims, *rest = point.split("-")
    b, h, s, d = dims.split("x")
    kv = f"_kv{rest[0][2:]}" if len(rest) == 2 else ""
    return f"bwd_b{b}_h{h}{kv}_sq{s}_skv{s}_d{d}_bf16_{rest[-1]}"


def main(dest, top, *pairs):
    variants = {}
    for pair in pairs:
        point, source = pair.split("=")
        db = sqlite3.connect(source)
        rows = db.execute(
            "select c.id, c.key, m.median_ms from current_measurements m join problems p on "
            "p.id = m.problem_id join configs c on c.id = m.config_id where p.key = ? and "
            "m.valid = 1 order by m.median_ms limit ?", (problem_key(point), int(top))).fetchall()
        problem_id = db.execute("select id from problems where key = ?",
                                (problem_key(point),)).fetchone()[0]
        db.close()
        os.makedirs(os.path.join(dest, point), exist_ok=True)
        variants[point] = []
        for rank, (config_id, key, ms) in enumerate(rows):
            path = os.path.join(dest, point, f"{rank}.db")
            shutil.copy(source, path)
            one = sqlite3.connect(path)
            one.execute("delete from measurements where problem_id = ? and config_id <> ?",
                        (problem_id, config_id))
            one.commit()
            one.execute("vacuum")
            one.close()
            variants[point].append({"rank": rank, "variant": key, "tuner_ms": ms,
                                    "catalog": f"{point}/{rank}.db"})
    with open(os.path.join(dest, "variants.json"), "w") as out:
        json.dump(variants, out, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:])
