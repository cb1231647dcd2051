#!/usr/bin/env python3
"""The warp-specialized backward's two consumer syncs side by side: each schedule's lockstep
variant and its lagged twin (the same key ending in "-lag"), measured in the same tuning runs.

    python3 bench/backward_consumer_sync.py SHOW_JSON... [--json OUT]

SHOW_JSON: `swr-tune show --family attention-backward ... --json` of each round's database
(bench/backward_ws_device_run.sh's `sync` call makes them, the two syncs' order swapped every
round). Prints, per problem and schedule, each side's median over the rounds and lockstep/lagged
(above 1: lagged is faster); with --json, the same rows for model/backward_prediction.hpp's
kLaggedRateShare figures (tests/model recompute them from the file kept in bench/results).
"""
import argparse
import json
import statistics
import sys

def schedule_of(key):
    """The key without its consumer sync: "...-head_major-lag-det" -> "...-head_major-det"."""
    return "-".join(token for token in key.split("-") if token != "lag")


def pairs(paths):
    """{(problem, schedule): {"lockstep": [ms...], "lagged": [ms...]}} over the files' ok rows."""
    table = {}
    for path in paths:
        with open(path) as f:
            show = json.load(f)
        for result in show["results"]:
            problem = result["problem"]["key"]
            for variant in result["variants"]:
                if variant["status"] != "ok":
                    continue
                key = variant["config_key"]
                side = "lagged" if schedule_of(key) != key else "lockstep"
                row = table.setdefault((problem, schedule_of(key)), {"lockstep": [], "lagged": []})
                row[side].append(variant["median_ms"])
    return table


def rows(table):
    out = []
    for (problem, schedule), sides in sorted(table.items()):
        if not sides["lockstep"] or not sides["lagged"]:
            continue
        lockstep = statistics.median(sides["lockstep"])
        lagged = statistics.median(sides["lagged"])
        out.append({"problem": problem, "schedule": schedule, "causal": "_causal" in problem,
                    "lockstep_ms": sides["lockstep"], "lagged_ms": sides["lagged"],
                    "lockstep_over_lagged": lockstep / lagged})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("show_json", nargs="+", help="swr-tune show --json output, one per round")
    parser.add_argument("--json", help="write the rows here as JSON")
    args = parser.parse_args(argv)
    table = rows(pairs(args.show_json))
    if not table:
        print("no schedule was measured with both syncs", file=sys.stderr)
        return 1
    print(f"{'problem':48} {'schedule':44} {'lockstep ms':>11} {'lagged ms':>10} {'lock/lag':>8}")
    for row in table:
        print(f"{row['problem']:48} {row['schedule']:44} "
              f"{statistics.median(row['lockstep_ms']):11.3f} "
              f"{statistics.median(row['lagged_ms']):10.3f} {row['lockstep_over_lagged']:8.3f}")
    for causal in (False, True):
        ratios = [r["lockstep_over_lagged"] for r in table if r["causal"] == causal]
        if ratios:
            print(f"{'causal' if causal else 'non-causal'}: median lockstep/lagged "
                  f"{statistics.median(ratios):.3f} over {len(ratios)} schedules "
                  f"({min(ratios):.3f}-{max(ratios):.3f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": table}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
