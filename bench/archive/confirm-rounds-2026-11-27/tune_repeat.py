"""Two tunes of the same backward shapes (two results databases): do they pick the same variant,
and how much does it matter? For each shape, the picks of four rules for a variant's time over its
runs in one database (its first run, its fastest, the lower median, the mean), whether the two
databases agree, and each pick's regret: its time over the best's, judged by the lower median of all
runs of both databases pooled. Then each variant's runs (ms, in the order taken).

    python3 bench/archive/confirm-rounds-2026-11-27/tune_repeat.py A.db B.db [--runs N]
"""
import argparse
import sqlite3
import statistics


def lower_median(runs):
    ordered = sorted(runs)
    return ordered[(len(ordered) - 1) // 2]


RULES = {"first run": lambda runs: runs[0], "fastest": min, "lower median": lower_median,
         "mean": statistics.mean}


def valid_runs(path):
    """{problem key: {config key: [median ms of each valid run, oldest first]}} of the backward."""
    database = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = database.execute(
        "SELECT p.key, c.key, m.median_ms FROM measurements AS m"
        " JOIN configs AS c ON c.id = m.config_id JOIN problems AS p ON p.id = m.problem_id"
        " WHERE p.family = 'attention-backward' AND m.status = 'ok'"
        " ORDER BY m.measured_at, m.id")
    runs = {}
    for problem, config, ms in rows:
        runs.setdefault(problem, {}).setdefault(config, []).append(ms)
    return runs


def pick(runs, rule):
    return min(runs, key=lambda config: (rule(runs[config]), config))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--runs", type=int, default=6, help="variants whose runs are listed")
    args = parser.parse_args()
    a, b = valid_runs(args.first), valid_runs(args.second)
    shapes = sorted(set(a) & set(b))
    spreads = sorted(max(r) / min(r) for d in (a, b) for s in shapes for r in d[s].values()
                     if len(r) >= 3)
    if spreads:
        print(f"runs of one variant within a tune (max/min, variants with 3 or more runs): "
              f"{len(spreads)} variants, median {statistics.median(spreads):.3f}, "
              f"90th percentile {spreads[int(0.9 * len(spreads))]:.3f}, worst {spreads[-1]:.3f}")
    print(f"{'rule':14s} same pick  regret: mean   worst  (of {len(shapes)} shapes, both picks each)")
    for name, rule in RULES.items():
        same, regrets = 0, []
        for shape in shapes:
            pooled = {}
            for d in (a, b):
                for config, runs in d[shape].items():
                    pooled.setdefault(config, []).extend(runs)
            judged = {config: lower_median(runs) for config, runs in pooled.items()}
            best = min(judged.values())
            picks = pick(a[shape], rule), pick(b[shape], rule)
            same += picks[0] == picks[1]
            regrets += [judged[p] / best for p in picks]
        print(f"{name:14s} {same:6d}/{len(shapes):<3d} {statistics.mean(regrets):12.4f} "
              f"{max(regrets):7.4f}")
    for shape in shapes:
        print(f"\n{shape}")
        for name in ("first run", "lower median"):
            picks = pick(a[shape], RULES[name]), pick(b[shape], RULES[name])
            print(f"  picks by the {name}: A {picks[0]}, B {picks[1]}")
        for label, d in (("A", a), ("B", b)):
            ranked = sorted(d[shape], key=lambda c: (lower_median(d[shape][c]), c))
            for config in ranked[:args.runs]:
                print(f"  {label} {config:56s} {' '.join(f'{ms:.3f}' for ms in d[shape][config])}")


if __name__ == "__main__":
    main()
