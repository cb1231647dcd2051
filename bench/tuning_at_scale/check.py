#!/usr/bin/env python3
"""Reads what run.sh left (databases, logs, step times) and prints issue 18's figures as a table.

Every figure comes from the databases (SQL over measurements) or from swr-tune's own output
(`show --json` for the best variant, the one rule of the project); nothing is typed in.
"""
import argparse
import json
import re
import sqlite3
from pathlib import Path


def read(path):
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def steps(work):
    result = {}
    for line in read(work / "logs/steps.tsv").splitlines():
        name, rc, seconds = line.split("\t")
        result[name] = {"rc": rc, "seconds": float(seconds)}
    return result


def rows(db):
    """(problem key, config key, status, median_ms, l2 misses, measured_at) of every measurement."""
    if not db.exists():
        return None
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(
            "SELECT p.key, c.key, m.status, m.median_ms, m.l2_sector_misses, m.measured_at "
            "FROM measurements m JOIN problems p ON p.id = m.problem_id "
            "JOIN configs c ON c.id = m.config_id ORDER BY m.measured_at").fetchall()
    finally:
        con.close()


def row_check(measured, expected_keys):
    """Lost and duplicated rows against the variants that should be there."""
    if measured is None:
        return {"present": False}
    pairs = [(r[0], r[1]) for r in measured]
    stored = set(pairs)
    return {
        "present": True,
        "rows": len(pairs),
        "duplicates": len(pairs) - len(stored),
        "lost": len(expected_keys - stored) if expected_keys is not None else None,
        "extra": len(stored - expected_keys) if expected_keys is not None else None,
        "failed": sum(1 for r in measured if r[2] != "ok"),
        "with_counters": sum(1 for r in measured if r[4] is not None),
    }


def best_per_problem(work, name):
    """The best variant per problem key, from `swr-tune show --json`."""
    try:
        shown = json.loads(read(work / f"logs/show_{name}.json"))
    except json.JSONDecodeError:
        return {}
    best = {}
    for result in shown.get("results", []):
        if result.get("best"):
            best[result["problem"]["key"]] = (result["best"]["config_key"],
                                              result["best"]["median_ms"])
    return best


def same_best(a, b):
    """Same variant, or within 2% of its time."""
    if a is None or b is None:
        return False
    return a[0] == b[0] or abs(a[1] - b[1]) <= 0.02 * min(a[1], b[1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--gpus", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    work, gpus = args.work, args.gpus
    db = work / "db"
    step = steps(work)
    table = []  # (check, figure, verdict)
    figures = {"gpus": gpus, "steps": step}

    def add(check, figure, ok):
        table.append((check, figure, "PASS" if ok is True else "FAIL" if ok is False else ok))

    # 1-2. The speedup shape: its space, one GPU against all.
    try:
        space = {(json.loads(read(work / "logs/space.out"))["problem"]["key"], c["key"])
                 for c in json.loads(read(work / "logs/space.out"))["configs"]}
    except (json.JSONDecodeError, KeyError):
        space = None
    one = row_check(rows(db / "one_gpu.db"), space)
    figures["one_gpu_rows"] = one
    add("space of the speedup shape", f"{len(space) if space else '?'} variants", space is not None)
    add("one GPU: rows lost / duplicated",
        f"{one.get('rows')} rows, lost {one.get('lost')}, dup {one.get('duplicates')}, "
        f"failed {one.get('failed')}",
        one.get("present") and one.get("lost") == 0 and one.get("duplicates") == 0)
    best_one = best_per_problem(work, "one_gpu")
    if gpus > 1:
        every = row_check(rows(db / "all_gpus.db"), space)
        figures["all_gpus_rows"] = every
        add(f"{gpus} GPUs: rows lost / duplicated",
            f"{every.get('rows')} rows, lost {every.get('lost')}, dup {every.get('duplicates')}, "
            f"failed {every.get('failed')}",
            every.get("present") and every.get("lost") == 0 and every.get("duplicates") == 0)
        out = read(work / "logs/tune_all_gpus.out")
        per_device = {d: len(re.findall(rf"\(device {d}\)|, device {d}\)", out))
                      for d in range(gpus)}
        figures["variants_per_device"] = per_device
        add("variants per device (all GPUs)", str(per_device), all(v > 0 for v in per_device.values()))
        t1 = step.get("tune_one_gpu", {}).get("seconds")
        tn = step.get("tune_all_gpus", {}).get("seconds")
        if t1 and tn and step["tune_one_gpu"]["rc"] == "0" and step["tune_all_gpus"]["rc"] == "0":
            speedup = t1 / tn
            figures["speedup"] = speedup
            add(f"speedup {gpus} GPUs vs 1 (>= {0.85 * gpus:.2f})",
                f"{t1:.1f} s / {tn:.1f} s = {speedup:.2f}x", speedup >= 0.85 * gpus)
        else:
            add("speedup", f"not measured (one {t1}, all {tn})", False)
        best_all = best_per_problem(work, "all_gpus")
        for key in sorted(set(best_one) | set(best_all)):
            a, b = best_one.get(key), best_all.get(key)
            figures.setdefault("best", {})[key] = {"one_gpu": a, "all_gpus": b}
            add("same best variant (or within 2%)",
                f"1 GPU {a[0] if a else None} {a[1] if a else ''} ms; {gpus} GPUs "
                f"{b[0] if b else None} {b[1] if b else ''} ms", same_best(a, b))
    else:
        add("speedup", "not done: this machine has 1 GPU", "N/A")

    # 3. Two tuners on GPU 0.
    lock_out = read(work / "logs/lock.out")
    second_err = read(work / "logs/lock_second.err")
    nowait_err = read(work / "logs/lock_nowait.err")
    waited = re.search(r"device 0 is free after waiting (\S+)", second_err)
    add("second tuner on GPU 0 waited",
        f"said busy: {'being measured by another tuner' in second_err}; "
        f"waited {waited.group(1) if waited else '?'}",
        "being measured by another tuner" in second_err and waited is not None)
    nowait_rc = re.search(r"nowait_rc=(\d+)", lock_out)
    add("--no-wait while GPU 0 is held", f"exit {nowait_rc.group(1) if nowait_rc else '?'}: "
        f"{nowait_err.strip()[:160]}", bool(nowait_rc) and nowait_rc.group(1) == "1"
        and "--no-wait" in nowait_err)
    first, second = rows(db / "lock_first.db"), rows(db / "lock_second.db")
    if first and second:
        serial = max(r[5] for r in first) < min(r[5] for r in second)
        counted = (sum(r[4] is not None for r in first), sum(r[4] is not None for r in second))
        figures["lock"] = {"first_rows": len(first), "second_rows": len(second),
                           "first_last": max(r[5] for r in first),
                           "second_first": min(r[5] for r in second), "with_counters": counted}
        add("the two tuners' measurements do not overlap",
            f"first ends {max(r[5] for r in first)}, second starts {min(r[5] for r in second)}",
            serial)
        add("both produce counters", f"rows with L2 counters: {counted[0]}/{len(first)}, "
            f"{counted[1]}/{len(second)}", counted[0] == len(first) and counted[1] == len(second))
    else:
        add("two tuners on GPU 0", "a database is missing", False)

    # 4. A planted fault with every GPU measuring.
    fault = rows(db / "fault.db")
    fault_err = read(work / "logs/fault.err")
    if fault:
        statuses = {}
        for r in fault:
            statuses[r[2]] = statuses.get(r[2], 0) + 1
        figures["fault_statuses"] = statuses
        add("planted fault: 1 fault, the rest ok, no GPU dropped", str(statuses),
            statuses.get("fault", 0) + statuses.get("timeout", 0) == 1
            and statuses.get("ok", 0) == len(fault) - 1 and "dropped" not in fault_err)
    else:
        add("planted fault", "no database", False)

    # 5-6. The plan, on all GPUs and as 2 shards merged.
    plan = json.loads(read(Path(__file__).parent / "plan8.json"))
    planned = sum(len(e["configs"]) for family in ("attention", "gemm") for e in plan[family])
    whole, s0, s1, merged = (rows(db / f"{n}.db") for n in ("plan_all", "shard0", "shard1", "merged"))
    if whole is not None:
        problems = {r[0] for r in whole}
        add(f"plan with --devices all ({len(problems)} shapes)",
            f"{len(whole)} rows of {planned} planned, {len(whole) - len({(r[0], r[1]) for r in whole})}"
            f" dup, {sum(r[2] != 'ok' for r in whole)} failed, {step.get('plan_all', {}).get('seconds')} s",
            len(whole) == planned and len(problems) >= 8)
        # Both families' rows carry counters: a worker of one family must not hold the profiler
        # while the other family's worker measures (CUPTI_ERROR_HARDWARE_BUSY).
        ok = [r for r in whole if r[2] == "ok"]
        counted = sum(1 for r in ok if r[4] is not None)
        add("plan: counters on both families' rows", f"{counted} of {len(ok)} rows",
            counted == len(ok) and len(ok) > 0)
    if s0 is not None and s1 is not None:
        k0, k1 = {(r[0], r[1]) for r in s0}, {(r[0], r[1]) for r in s1}
        add("2 shards: disjoint, covering the plan",
            f"{len(k0)} + {len(k1)} variants, {len(k0 & k1)} in both, "
            f"{step.get('shards', {}).get('seconds')} s",
            not (k0 & k1) and len(k0) + len(k1) == planned)
    if merged is not None:
        add("import of the 2 shards", f"{len(merged)} rows", len(merged) == planned)
        best_whole, best_merged = best_per_problem(work, "plan_all"), best_per_problem(work, "merged")
        same = 0
        for key in sorted(set(best_whole) | set(best_merged)):
            a, b = best_whole.get(key), best_merged.get(key)
            figures.setdefault("plan_best", {})[key] = {"all_gpus": a, "shards_merged": b}
            same += same_best(a, b)
            add(f"best of {key}", f"all {a[0] if a else None} {a[1] if a else ''} ms; shards "
                f"{b[0] if b else None} {b[1] if b else ''} ms", same_best(a, b))
        figures["plan_same_best"] = f"{same} of {len(set(best_whole) | set(best_merged))}"

    width = max(len(c) for c, _, _ in table)
    lines = [f"{'check'.ljust(width)}  verdict  figure"]
    lines += [f"{c.ljust(width)}  {v:7s}  {f}" for c, f, v in table]
    lines.append("steps: " + ", ".join(f"{n} rc={s['rc']} {s['seconds']}s" for n, s in step.items()))
    text = "\n".join(lines) + "\n"
    args.out.joinpath("summary.txt").write_text(text)
    args.out.joinpath("summary.json").write_text(json.dumps(figures, indent=1, default=str))
    print(text)


if __name__ == "__main__":
    main()
