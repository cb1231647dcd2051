#!/usr/bin/env python3
"""Measured vs predicted L2 misses, and sawtooth vs cyclic, from the output of bench/l2_sweep.sh.

For every measured variant (tuner counters: lts__t_sectors_srcunit_tex_lookup_miss) it asks the L2
model (`swr-tune model --json`, no GPU needed) for the same shape and variant, and prints the error
per point, the mean absolute percentage error and Spearman's rank correlation; then, per shape, the
misses of each sawtooth variant over those of its cyclic twin.
    python3 bench/l2_calibration.py SWEEP_DIR [--gpu h200] [--out FILE.md]
"""
import argparse
import glob
import json
import os
import subprocess


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            result[order[k]] = (i + j) / 2.0  # ties share their mean rank
        i = j + 1
    return result


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    mean_a, mean_b = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - mean_a) * (y - mean_b) for x, y in zip(ra, rb))
    var_a = sum((x - mean_a) ** 2 for x in ra)
    var_b = sum((y - mean_b) ** 2 for y in rb)
    return cov / (var_a * var_b) ** 0.5


def predict(swr_tune, gpu, problem, keys):
    command = [swr_tune, "model", "--gpu", gpu, "--batch", str(problem["batch"]), "--heads",
               str(problem["heads"]), "--seq", str(problem["seq_q"]), "--seq-kv",
               str(problem["seq_kv"]), "--head-dim", str(problem["head_dim"]), "--dtype",
               problem["dtype"], "--json"] + (["--causal"] if problem["causal"] else [])
    for key in keys:
        command += ["--config", key]
    report = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
    return {p["config"]: p for p in report["predictions"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep_dir")
    parser.add_argument("--gpu", default="h200", help="profile the model predicts for")
    parser.add_argument("--swr-tune", default="build/swr-tune")
    parser.add_argument("--out", help="also write the tables as Markdown to this file")
    args = parser.parse_args()

    points = []
    for path in sorted(glob.glob(os.path.join(args.sweep_dir, "measured_*.json"))):
        shown = json.load(open(path))
        for result in shown["results"]:
            problem = result["problem"]
            variants = [v for v in result["variants"] if v.get("status") == "ok"
                        and v.get("l2_sector_misses") is not None]
            predicted = predict(args.swr_tune, args.gpu, problem, [v["config_key"] for v in variants])
            for v in variants:
                p = predicted[v["config_key"]]
                points.append({"problem": problem, "key": v["config_key"], "config": v["config"],
                               "measured": v["l2_sector_misses"], "predicted": p["misses"],
                               "sectors": v["l2_sectors_from_tex"], "ms": v["median_ms"],
                               "compulsory": p["compulsory_misses"]})
    points.sort(key=lambda q: (q["problem"]["head_dim"], q["problem"]["causal"],
                               q["config"]["persistence"], q["problem"]["seq_q"], q["key"]))

    lines = ["## Measured vs predicted L2 sector misses (lts__t_sectors_srcunit_tex_lookup_miss)", "",
             "| D | causal | S | variant | measured | predicted | error |", "|---|---|---|---|---|---|---|"]
    errors = []
    for q in points:
        error = (q["predicted"] - q["measured"]) / q["measured"]
        errors.append(abs(error))
        lines.append(f"| {q['problem']['head_dim']} | {int(q['problem']['causal'])} | {q['problem']['seq_q']} "
                     f"| {q['key']} | {q['measured']:.4g} | {q['predicted']:.4g} | {100 * error:+.1f}% |")
    mape = 100 * sum(errors) / len(errors)
    rho = spearman([q["measured"] for q in points], [q["predicted"] for q in points])
    lines += ["", f"{len(points)} points: mean absolute percentage error {mape:.1f}%, "
              f"Spearman rank correlation {rho:.3f}", ""]

    lines += ["## Sawtooth over cyclic twin (same tile, stages, persistence, swizzle), measured", "",
              "| D | causal | variant | S | cyclic misses | sawtooth misses | sawtooth/cyclic | cyclic ms | sawtooth ms |",
              "|---|---|---|---|---|---|---|---|---|"]
    by_twin = {}
    for q in points:
        variant = q["key"].replace("-cyclic-", "-").replace("-sawtooth-", "-")
        twin = (q["problem"]["head_dim"], q["problem"]["causal"], variant, q["problem"]["seq_q"])
        by_twin.setdefault(twin, {})[q["config"]["order"]] = q
    for twin, orders in sorted(by_twin.items()):
        if "cyclic" in orders and "sawtooth" in orders:
            c, s = orders["cyclic"], orders["sawtooth"]
            lines.append(f"| {twin[0]} | {int(twin[1])} | {twin[2]} | {twin[3]} | {c['measured']:.4g} | "
                         f"{s['measured']:.4g} | {s['measured'] / c['measured']:.2f} | {c['ms']:.2f} | {s['ms']:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
