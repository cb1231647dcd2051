"""Attention backward variants of one shape timed against each other under sustained load, on a GPU
machine, through the call a user makes (swr.torch.attention under autograd, forward + backward).

Why not the tuner's figure: the tuner times a variant for a fraction of a second, while the GPU's
power draw still climbs; under back-to-back work the H200 reaches its power cap within about a
second and runs at a lower clock (measured 2026-11-25: ~1650 MHz at ~690 W against ~1900-1980 MHz
during a tuner's runs), which a training step, and bench/training_step.py's interleaved peers,
run at. There, a variant that spends less energy a step runs faster even where it is no faster
at full clock.

For each point the forward is tuned once (--model-top 10), then each backward variant alone into
its own copy of that database. Rounds follow: each variant runs forward + backward back to back
for --seconds, the second half timed by device events (the clock has settled by then), variants
in rotating order. Printed per variant: the median ms a step over the rounds and its ratio to the
first variant's; --out writes every round as JSON. With --forward the variants are the forward's,
each tuned alone, and a run is the forward alone (no autograd).

    backward_sustained_ab.py --swr-tune BIN --work DIR --points 2x16x16384x128-noncausal \\
        --variants bwd-wgmma-m64n128w12s2-sawtooth-static-head_major \\
                   bwd-wgmma-m80n128w12s2-sawtooth-static-head_major
"""
import argparse
import json
import shutil
import statistics
import subprocess
from pathlib import Path

import device_timing
from training_step import inputs, parse_point


def shape_options(point):
    options = ["--batch", str(point["batch"]), "--heads", str(point["heads"]), "--seq",
               str(point["seq"]), "--head-dim", str(point["head_dim"]), "--dtype", "bf16"]
    if point["kv_heads"] != point["heads"]:
        options += ["--kv-heads", str(point["kv_heads"])]
    return options + (["--causal"] if point["causal"] else [])


def tune(swr_tune, point, database, extra):
    command = [swr_tune, "--gpu", "auto", *shape_options(point), "--counters", "none", "--db",
               str(database), *extra]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{' '.join(command)} failed (rc {done.returncode}): "
              f"{(done.stdout + done.stderr).strip().splitlines()[-1:]}", flush=True)
    return done.returncode == 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swr-tune", required=True, help="the swr-tune binary")
    parser.add_argument("--work", required=True, help="a directory for the databases")
    parser.add_argument("--points", nargs="+", required=True,
                        help="BxHxSxD[-kvN]-causal|noncausal (bf16)")
    parser.add_argument("--variants", nargs="+", required=True,
                        help="backward config keys (forward keys with --forward)")
    parser.add_argument("--forward", action="store_true",
                        help="time forward variants alone (no autograd) instead")
    parser.add_argument("--seconds", type=float, default=1.5, help="of back-to-back steps a run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", help="write every round as JSON here")
    args = parser.parse_args(argv)
    points = []
    for text in args.points:
        try:
            points.append(parse_point(text))
        except ValueError as error:
            parser.error(str(error))
    if args.seconds <= 0 or args.rounds < 1:
        parser.error("--seconds must be above 0 and --rounds at least 1")

    import torch
    import swr
    import swr.torch as swr_torch

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    results = []
    for point in points:
        forward = work / f"{point['name']}-forward.db"
        if not args.forward and not tune(args.swr_tune, point, forward, ["--model-top", "10"]):
            continue
        catalogs = {}
        for variant in args.variants:
            database = work / f"{point['name']}-{variant}.db"
            if args.forward:
                tuned = tune(args.swr_tune, point, database, ["--config", variant])
            else:
                shutil.copy(forward, database)
                tuned = tune(args.swr_tune, point, database,
                             ["--family", "attention-backward", "--config", variant])
            if tuned:
                catalogs[variant] = swr.Catalog(str(database))
        q, k, v, grad = inputs(torch, point, torch.bfloat16)
        gqa = point["kv_heads"] != point["heads"]

        def step(catalog):
            if args.forward:
                with torch.no_grad():
                    swr_torch.attention(q, k, v, is_causal=point["causal"], enable_gqa=gqa,
                                        fallback="error", catalog=catalog)
                return
            out = swr_torch.attention(q, k, v, is_causal=point["causal"], enable_gqa=gqa,
                                      fallback="error", catalog=catalog)
            torch.autograd.grad(out, (q, k, v), grad)

        runnable = {}
        for variant, catalog in catalogs.items():
            try:
                step(catalog)
                runnable[variant] = catalog
            except swr.KernelRefused as refusal:  # not in this point's space: said, not fatal
                print(f"{point['name']} {variant}: refused: {refusal}")
        times = {variant: [] for variant in runnable}
        names = list(runnable)
        for round_index in range(args.rounds):
            for offset in range(len(names)):
                variant = names[(round_index + offset) % len(names)]
                times[variant].append(device_timing.sustained_ms(
                    torch, lambda: step(runnable[variant]), args.seconds))
        first = statistics.median(times[names[0]]) if names else None
        for variant in names:
            median = statistics.median(times[variant])
            print(f"{point['name']:28} {variant:56} {median:8.3f} ms a step "
                  f"({first / median:.3f}x the first)", flush=True)
            results.append({"point": point["name"], "variant": variant, "step_ms": times[variant],
                            "median_ms": median})
    if args.out:
        Path(args.out).write_text(json.dumps({"seconds": args.seconds, "rounds": args.rounds,
                                              "results": results}, indent=1))


if __name__ == "__main__":
    main()
