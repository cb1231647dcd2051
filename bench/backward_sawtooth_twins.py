#!/usr/bin/env python3
"""The sawtooth Q walk of the attention backward measured against its cyclic twin (same tile,
persistence and swizzle): L2 misses and time from a results database that `swr-tune --family
attention-backward --config ...` filled on the GPU, beside what the L2 model predicts for the same
variants (`swr-tune model --family attention-backward --json`). Prints a markdown table and writes
it, with the figures as JSON, next to --out.

    bench/backward_sawtooth_twins.py --db tune.db --model model.json --out twins
"""
import argparse
import json
import sqlite3
import sys


def measured(db_path):
    """{(problem key, config key): (median ms, L2 misses, hit rate, TFLOP/s)} of valid rows."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT p.key, c.key, m.median_ms, m.l2_sector_misses, m.l2_hit_rate, m.tflops"
        " FROM measurements m JOIN problems p ON p.id = m.problem_id"
        " JOIN configs c ON c.id = m.config_id"
        " WHERE m.status = 'ok' AND p.family = 'attention-backward'").fetchall()
    return {(r[0], r[1]): r[2:] for r in rows}


def twin_of(key):
    if "-sawtooth-" in key:
        return key.replace("-sawtooth-", "-cyclic-")
    return None


def ratio(a, b):
    return f"{a / b:.3f}" if a is not None and b else "-"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="results database the tune wrote")
    parser.add_argument("--model", required=True, nargs="+",
                        help="swr-tune model --family attention-backward --json output(s)")
    parser.add_argument("--out", required=True, help="path prefix of the .md and .json written")
    args = parser.parse_args(argv)
    figures = measured(args.db)
    predicted = {}
    for path in args.model:
        with open(path) as file:
            model = json.load(file)
        for row in model["predictions"]:
            predicted[(model["problem"]["key"], row["config_key"])] = row
    lines = ["| problem | sawtooth variant | measured misses s/c | measured time s/c |"
             " predicted misses s/c | measured ms (cyclic, sawtooth) |",
             "|---|---|---|---|---|---|"]
    table = []
    for (problem, key), saw in sorted(figures.items()):
        cyclic_key = twin_of(key)
        if cyclic_key is None or (problem, cyclic_key) not in figures:
            continue
        cyc = figures[(problem, cyclic_key)]
        model_saw = predicted.get((problem, key))
        model_cyc = predicted.get((problem, cyclic_key))
        model_ratio = (ratio(model_saw["misses"], model_cyc["misses"])
                       if model_saw and model_cyc else "-")
        row = {"problem": problem, "sawtooth": key, "cyclic": cyclic_key,
               "measured": {"sawtooth": dict(zip(("ms", "misses", "hit_rate", "tflops"), saw)),
                            "cyclic": dict(zip(("ms", "misses", "hit_rate", "tflops"), cyc))},
               "predicted": {"sawtooth": model_saw, "cyclic": model_cyc}}
        table.append(row)
        lines.append(f"| {problem} | {key} | {ratio(saw[1], cyc[1])} | {ratio(saw[0], cyc[0])} |"
                     f" {model_ratio} | {cyc[0]:.3f}, {saw[0]:.3f} |")
    if not table:
        print("no sawtooth/cyclic twin pair measured in " + args.db, file=sys.stderr)
        return 1
    text = "\n".join(lines) + "\n"
    with open(args.out + ".md", "w") as file:
        file.write(text)
    with open(args.out + ".json", "w") as file:
        json.dump(table, file, indent=1)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
