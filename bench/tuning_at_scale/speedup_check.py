#!/usr/bin/env python3
"""Reads what speedup.sh left and prints, per workload, one GPU against all: the speedup, rows
lost or duplicated, rows without counters, the best variant of each shape, and each run's own
time split. Every figure comes from the databases, swr-tune's `show --json` or its output."""
import argparse
import json
import re
from pathlib import Path

from check import best_per_problem, read, row_check, rows, same_best, steps


def time_split(work, name):
    text = read(work / f"logs/{name}.out") + read(work / f"logs/{name}.err")
    return [line.strip() for line in text.splitlines() if line.startswith("time split")]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--plan", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    work, db = args.work, args.work / "db"
    step = steps(work)
    lines, figures = [], {"steps": step}
    pairs = sorted(m.groups() for n in step if (m := re.fullmatch(r"(.+)_one_(\d+)", n)))
    for workload, round_ in pairs:  # e.g. space_one_1 against space_all_1
        run, one, every = f"{workload}_{round_}", f"{workload}_one_{round_}", f"{workload}_all_{round_}"
        if step.get(one, {}).get("rc") != "0" or step.get(every, {}).get("rc") != "0":
            lines.append(f"{run}: not compared (one: {step.get(one)}, all: {step.get(every)})")
            continue
        one_rows, all_rows = rows(db / f"{one}.db"), rows(db / f"{every}.db")
        expected = {(r[0], r[1]) for r in one_rows}
        check_one, check_all = row_check(one_rows, expected), row_check(all_rows, expected)
        t1, tn = step[one]["seconds"], step[every]["seconds"]
        best_one, best_all = best_per_problem(work, one), best_per_problem(work, every)
        same = sum(same_best(best_one.get(k), best_all.get(k)) for k in best_one)
        figures[run] = {"one_gpu_s": t1, "all_gpus_s": tn, "speedup": t1 / tn,
                        "one_gpu": check_one, "all_gpus": check_all,
                        "best": {k: {"one_gpu": best_one.get(k), "all_gpus": best_all.get(k)}
                                 for k in best_one},
                        "time_split": {"one_gpu": time_split(work, one),
                                       "all_gpus": time_split(work, every)}}
        lines.append(f"{run}: one GPU {t1:.1f} s, all GPUs {tn:.1f} s: {t1 / tn:.2f}x")
        for label, check in (("one GPU", check_one), ("all GPUs", check_all)):
            ok = check["rows"] - check["failed"]
            lines.append(f"  {label}: {check['rows']} rows, lost {check['lost']}, extra "
                         f"{check['extra']}, duplicates {check['duplicates']}, failed "
                         f"{check['failed']}, counters on {check['with_counters']} of {ok} ok rows")
        lines.append(f"  same best variant (or within 2%): {same} of {len(best_one)} shapes")
        for key in sorted(best_one):
            a, b = best_one[key], best_all.get(key)
            lines.append(f"    {key}: {a[0]} {a[1]:.4f} ms | {b[0] if b else None} "
                         f"{b[1] if b else float('nan'):.4f} ms")
        for label, name in (("one GPU", one), ("all GPUs", every)):
            for split in time_split(work, name):
                lines.append(f"  {label}: {split}")
    lines.append("steps: " + ", ".join(f"{n} rc={s['rc']} {s['seconds']}s" for n, s in step.items()))
    text = "\n".join(lines) + "\n"
    args.out.joinpath("summary.txt").write_text(text)
    args.out.joinpath("summary.json").write_text(json.dumps(figures, indent=1, default=str))
    print(text)


if __name__ == "__main__":
    main()
