#!/usr/bin/env python3
"""Markdown tables for a README from what bench/tuned_attention_device_run.sh brought back: one
head-to-head table per results file (attention_vs_pytorch.py's results.json or results.csv; the
CSV where the JSON did not come back) and the tuning coverage of every point in the database
(variants of the space measured, failed, how many mma_sync variants the tuner's stop rule cut to
one timed run, best of each instruction path). Nothing is typed in: every figure is read here.

    python3 bench/tuned_acceptance_table.py --database DIR/tuned.db --keys DIR/keys \\
        --results DIR/bench-f16/results.json DIR/bench-bf16/results.json
"""
import argparse
import csv
import json
import os
import sqlite3
import sys

PEERS = ("cudnn", "flash2")


def load_points(path):
    """[(point fields, {candidate: fields})] from a results.json or results.csv."""
    if path.endswith(".json"):
        with open(path) as f:
            return [(p, p["candidates"]) for p in json.load(f)["points"]]
    points = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            entry = points.setdefault(row["key"], ({
                "key": row["key"], "batch": int(row["batch"]), "heads": int(row["heads"]),
                "seq": int(row["seq"]), "head_dim": int(row["head_dim"]), "dtype": row["dtype"],
                "causal": row["causal"] == "True", "swr_config": row["config"] or None}, {}))
            candidate = {k: row[k] for k in ("status", "config", "note")}
            for k in ("median_ms", "tflops", "relative_error"):
                candidate[k] = float(row[k]) if row[k] else None
            entry[1][row["candidate"]] = candidate
            if row["candidate"] == "swr":
                entry[0]["swr_config"] = row["config"]
    return list(points.values())


def tuner_medians(database):
    """{problem key: (best config key, its median ms)} over the valid current measurements."""
    with sqlite3.connect(f"file:{database}?mode=ro&immutable=1", uri=True) as db:
        rows = db.execute(
            "SELECT p.key, cm.config_key, cm.median_ms FROM current_measurements cm "
            "JOIN problems p ON p.id = cm.problem_id WHERE cm.valid = 1 "
            "ORDER BY cm.median_ms").fetchall()
    best = {}
    for problem, config, median in rows:
        best.setdefault(problem, (config, median))
    return best


def head_to_head(path, best):
    lines = [f"`{path}`", "",
             "| B | H | S | D | causal | swr variant (runtime's choice) | swr TFLOP/s | cuDNN "
             "TFLOP/s | FA2 TFLOP/s | swr/cuDNN | swr/FA2 | swr ms | cuDNN ms | FA2 ms | tuner's "
             "median ms | swr rel. err | output poisoned |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for point, candidates in load_points(path):
        swr = candidates["swr"]
        ok = {name: c for name, c in candidates.items() if c.get("status") == "ok"}
        ratio = {p: (ok[p]["median_ms"] / ok["swr"]["median_ms"]) if p in ok and "swr" in ok
                 else None for p in PEERS}
        tuned = best.get(point["key"])
        tuned_ms = f"{tuned[1]:.3f}" if tuned and tuned[0] == point["swr_config"] else "-"

        def cell(name, field, form):
            value = ok.get(name, {}).get(field)
            return form.format(value) if value is not None else candidates[name]["status"]
        poisoned = swr.get("output_poisoned")
        lines.append("| " + " | ".join([
            str(point["batch"]), str(point["heads"]), str(point["seq"]), str(point["head_dim"]),
            "yes" if point["causal"] else "no", f"`{point['swr_config']}`",
            cell("swr", "tflops", "{:.1f}"), cell("cudnn", "tflops", "{:.1f}"),
            cell("flash2", "tflops", "{:.1f}"),
            *[f"**{ratio[p]:.3f}**" if ratio[p] is not None and p == "cudnn"
              else (f"{ratio[p]:.2f}" if ratio[p] is not None else "-") for p in PEERS],
            cell("swr", "median_ms", "{:.3f}"), cell("cudnn", "median_ms", "{:.3f}"),
            cell("flash2", "median_ms", "{:.3f}"), tuned_ms,
            cell("swr", "relative_error", "{:.1e}"),
            "not recorded" if poisoned is None else ("yes" if poisoned else "NO")]) + " |")
    return "\n".join(lines)


def coverage(database, keys_dir):
    """One row per problem: its space (the key list the tune was given), what was measured."""
    with sqlite3.connect(f"file:{database}?mode=ro&immutable=1", uri=True) as db:
        rows = db.execute(
            "SELECT p.key, c.key, m.status, m.timed_runs, m.median_ms FROM current_measurements cm "
            "JOIN measurements m ON m.id = cm.measurement_id "
            "JOIN problems p ON p.id = cm.problem_id JOIN configs c ON c.id = cm.config_id"
        ).fetchall()
    spaces = {}
    for name in sorted(os.listdir(keys_dir)):
        if name.endswith(".txt"):
            with open(os.path.join(keys_dir, name)) as f:
                keys = [k for k in f.read().split() if k]
            dims, mask_dtype = name[:-4].split("-", 1)
            mask, dtype = mask_dtype.rsplit("-", 1)
            b, h, s, d = dims.split("x")
            spaces[f"b{b}_h{h}_sq{s}_skv{s}_d{d}_{dtype}_{mask}"] = set(keys)
    lines = ["| problem | space | measured ok | failed | not measured | wgmma measured | "
             "mma_sync cut to 1 timed run | best wgmma ms | best mma_sync ms | mma_sync/wgmma |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for problem in sorted(spaces, key=lambda k: (k.split("_")[5], k.split("_")[4], k)):
        mine = [r for r in rows if r[0] == problem]
        measured = {r[1] for r in mine}
        ok = [r for r in mine if r[2] == "ok"]
        wgmma = [r for r in ok if r[1].startswith("wgmma")]
        mma = [r for r in ok if not r[1].startswith("wgmma")]
        best_w = min(r[4] for r in wgmma) if wgmma else None
        best_m = min(r[4] for r in mma) if mma else None
        lines.append("| " + " | ".join([
            f"`{problem}`", str(len(spaces[problem])), str(len(ok)), str(len(mine) - len(ok)),
            str(len(spaces[problem] - measured)),
            f"{len(wgmma)}/{sum(k.startswith('wgmma') for k in spaces[problem])}",
            f"{sum(1 for r in mma if r[3] == 1)}/{len(mma)}",
            f"{best_w:.3f}" if best_w else "-", f"{best_m:.3f}" if best_m else "-",
            f"{best_m / best_w:.2f}" if best_w and best_m else "-"]) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", required=True, help="the tuned results database")
    parser.add_argument("--keys", required=True, help="directory of the per-point key lists")
    parser.add_argument("--results", nargs="+", required=True,
                        help="results.json or results.csv of attention_vs_pytorch.py")
    args = parser.parse_args(argv)
    for path in [args.database, args.keys, *args.results]:
        if not os.path.exists(path):
            print(f"tuned_acceptance_table: '{path}' does not exist: allowed an existing "
                  f"database, key directory and results files", file=sys.stderr)
            return 2
    best = tuner_medians(args.database)
    for path in args.results:
        print(head_to_head(path, best) + "\n")
    print(coverage(args.database, args.keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
