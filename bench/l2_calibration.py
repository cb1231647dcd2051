#!/usr/bin/env python3
"""Measured vs predicted L2 misses, and sawtooth vs cyclic, from the output of bench/l2_sweep.sh.

The figures (error, pooled and per-shape rank correlation, pair order; in sample and held out) and
the predictions come from the C++ check, `swr-l2-calibration` (model/calibration_check.hpp: the
same code the test of bench/results/l2-sweep-h200/calibration.json runs); this script only lays
them out as Markdown tables, with the measured misses of each sawtooth variant over its cyclic twin.
    python3 bench/l2_calibration.py SWEEP_DIR [--gpu h200] [--out FILE.md]
"""
import argparse
import glob
import json
import os
import subprocess


def checked(tool, sweep_dir, gpu):
    """The C++ check's figures and per-point predictions (model/calibration_check.hpp)."""
    command = [tool, sweep_dir, "--gpu", gpu]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def figures_line(name, figures):
    return (f"{name}: {figures['points']} points, misses off by {figures['misses_mape_percent']:.1f}% "
            f"on average, Spearman pooled {figures['pooled_spearman']:.3f}, within a shape min "
            f"{figures['min_shape_spearman']:.3f} median {figures['median_shape_spearman']:.3f}, "
            f"pairs >= 5% apart ordered right {figures['pairs_ordered']} of {figures['pairs']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep_dir")
    parser.add_argument("--gpu", default="h200", help="profile the model predicts for")
    parser.add_argument("--tool", default="build/swr-l2-calibration")
    parser.add_argument("--out", help="also write the tables as Markdown to this file")
    args = parser.parse_args()

    report = checked(args.tool, args.sweep_dir, args.gpu)
    predicted = {(p["shape"], p["variant"]): p for p in report["points"]}
    points = []
    for path in sorted(glob.glob(os.path.join(args.sweep_dir, "measured_*.json"))):
        shown = json.load(open(path))
        for result in shown["results"]:
            problem = result["problem"]
            for v in result["variants"]:
                if v.get("status") != "ok" or v.get("l2_sector_misses") is None:
                    continue
                p = predicted[(problem["key"], v["config_key"])]
                points.append({"problem": problem, "key": v["config_key"], "config": v["config"],
                               "measured": v["l2_sector_misses"], "predicted": p["predicted"],
                               "ms": v["median_ms"]})
    points.sort(key=lambda q: (q["problem"]["head_dim"], q["problem"]["causal"],
                               q["config"]["persistence"], q["problem"]["seq_q"], q["key"]))

    lines = ["## Measured vs predicted L2 sector misses (lts__t_sectors_srcunit_tex_lookup_miss)", "",
             "| D | causal | S | variant | measured | predicted | error |", "|---|---|---|---|---|---|---|"]
    for q in points:
        error = (q["predicted"] - q["measured"]) / q["measured"]
        lines.append(f"| {q['problem']['head_dim']} | {int(q['problem']['causal'])} | {q['problem']['seq_q']} "
                     f"| {q['key']} | {q['measured']:.4g} | {q['predicted']:.4g} | {100 * error:+.1f}% |")
    held_out = report["held_out"]
    lines += ["", figures_line("In sample (the profile's constants, fitted on every point)",
                               report["in_sample"]["figures"]),
              "", figures_line(f"Held out (constants refitted on {held_out['fit_set']}: first-touch "
                               f"factor {held_out['first_touch_miss_factor']}, peer-fill weight "
                               f"{held_out['peer_fill_miss_weight']})", held_out["figures"]), ""]

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
