#!/usr/bin/env python3
"""How much of training_step.py's figures is the host's: each candidate's forward alone and its
forward + backward, timed three ways in interleaved rounds (L2 flushed before every run):
  idle    as training_step.py times them: device events around the call, started on an idle GPU,
          so the time the GPU waits for the host to enqueue the work counts;
  device  the same with a spin kernel enqueued before the start event (the GPU busy until the
          host has enqueued everything): the device's time alone;
  host    the host's wall time of the call while the GPU is busy (what it takes to enqueue).
idle - device is the host time the idle-GPU method exposes. Same catalog, points and candidates as
training_step.py (FA4 where importable).

    python3 bench/training_host_share.py --catalog tuned.db --points 4x32x4096x64-noncausal
"""
import argparse
import json
import statistics
import sys
import time

import device_timing
import training_step

# The spin kernel before the start event: ~4 ms at a 2 GHz clock, longer than any enqueue.
LEAD_CYCLES = 8_000_000


def host_ms(torch, fn, flush, lead_cycles):
    flush()
    torch.cuda._sleep(lead_cycles)
    begin = time.perf_counter()
    fn()
    elapsed = (time.perf_counter() - begin) * 1e3
    torch.cuda.synchronize()
    return elapsed


def run_point(torch, swr_torch, catalog, point, dtype, flush, runs, lead_cycles):
    steps = training_step.candidates(torch, swr_torch, catalog, point, dtype)
    q, k, v, grad = training_step.inputs(torch, point, dtype)
    forwards = training_step.forward_calls(swr_torch, catalog, point, q, k, v)
    calls, skipped = {}, {}
    for name, step in steps.items():
        if isinstance(step, str):
            skipped[name] = step
            continue
        try:  # warm-up: plans, module loads; a candidate refusing the point is said, not fatal
            forwards[name]()
            step(q, k, v, grad)
        except Exception as failure:
            skipped[name] = "refused: " + str(failure).splitlines()[0][:300]
            continue
        calls[(name, "fwd")] = forwards[name]
        calls[(name, "fwd+bwd")] = lambda step=step: step(q, k, v, grad)
    torch.cuda.synchronize()
    ways = {"idle": lambda fn: device_timing.time_once(torch, fn, flush),
            "device": lambda fn: device_timing.time_once(torch, fn, flush, lead_cycles),
            "host": lambda fn: host_ms(torch, fn, flush, lead_cycles)}
    times = {(key, way): [] for key in calls for way in ways}
    keys = list(calls)
    for round_index in range(runs if keys else 0):
        start = round_index % len(keys)
        for key in keys[start:] + keys[:start]:
            for way, measure in ways.items():
                times[(key, way)].append(measure(calls[key]))
    rows = [{"candidate": name, "status": why} for name, why in skipped.items()]
    for (name, what) in keys:
        medians = {way: statistics.median(times[((name, what), way)]) for way in ways}
        rows.append({"candidate": name, "call": what, "status": "ok",
                     **{f"{way}_ms": ms for way, ms in medians.items()},
                     "exposed_host_ms": medians["idle"] - medians["device"]})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", nargs="+", required=True,
                        help="BxHxSxD[-kvN]-causal|noncausal, as training_step.py")
    parser.add_argument("--dtype", choices=("bf16", "f16"), default="bf16")
    parser.add_argument("--catalog", help="results database or export swr reads (default: swr's)")
    parser.add_argument("--runs", type=int, default=15, help="rounds per point (median over them)")
    parser.add_argument("--out", help="write every figure as JSON here")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs {args.runs}: allowed 1 or more")
    points = [training_step.parse_point(p) for p in args.points]

    torch, swr_torch, dtype, catalog, props, flush = training_step.gpu_session(args.dtype,
                                                                               args.catalog)
    results = {"device": props.name, "torch": torch.__version__, "points": []}
    print(f"{'point':30} {'candidate':9} {'call':8} {'idle ms':>9} {'device ms':>9} "
          f"{'host ms':>9} {'exposed':>9}")
    for point in points:
        rows = run_point(torch, swr_torch, catalog, point, dtype, flush, args.runs, LEAD_CYCLES)
        results["points"].append({"point": point["name"], "rows": rows})
        for row in rows:
            if row["status"] != "ok":
                print(f"{point['name']:30} {row['candidate']:9} {row['status']}", flush=True)
                continue
            print(f"{point['name']:30} {row['candidate']:9} {row['call']:8} {row['idle_ms']:9.3f} "
                  f"{row['device_ms']:9.3f} {row['host_ms']:9.3f} {row['exposed_host_ms']:9.3f}",
                  flush=True)
        if args.out:
            with open(args.out, "w") as file:
                json.dump(results, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
