#!/usr/bin/env python3
"""swr's attention backward on the two layouts a model hands it, head to head: Q, K, V as
[B, S, H, D] projections seen as [B, H, S, D] (what bench/training_step.py times, read by the
kernels as they lie) and as contiguous [B, H, S, D] (what the tuner times). Each is timed as the
backward alone (autograd.grad over a kept graph) and as the whole step (forward + backward),
interleaved in the balanced order with the L2 flushed before every run, FA4's backward alone
beside them where it is importable. Shows whether the inputs' layout is what puts the step's
backward below the tuner's rate.

    python3 bench/backward_layout.py --catalog tuned.db --points 1x16x32768x128-causal
"""
import argparse
import json
import sys
import zlib

import device_timing
from training_step import flops, gpu_session, inputs, parse_point


def timed_calls(torch, swr_torch, catalog, point, dtype):
    """{name: call}: swr's backward alone and step on both layouts, FA4's backward alone."""
    gqa = point["kv_heads"] != point["heads"]
    strided = inputs(torch, point, dtype)
    grad = strided[3]
    contiguous = tuple(t.detach().contiguous().requires_grad_(True) for t in strided[:3])
    calls = {}
    for layout, (q, k, v) in (("bshd", strided[:3]), ("bhsd", contiguous)):
        def step(q=q, k=k, v=v):
            return swr_torch.attention(q, k, v, is_causal=point["causal"], enable_gqa=gqa,
                                       fallback="error", catalog=catalog)
        out = step()
        calls[f"swr bwd {layout}"] = (
            lambda out=out, q=q, k=k, v=v: torch.autograd.grad(out, (q, k, v), grad,
                                                               retain_graph=True))
        calls[f"swr step {layout}"] = (
            lambda step=step, q=q, k=k, v=v: torch.autograd.grad(step(), (q, k, v), grad))
    try:
        from flash_attn.cute.interface import flash_attn_func
    except Exception as error:  # not installed here: said in the output
        print(f"fa4 unavailable: {str(error).splitlines()[0][:200]}")
        return calls
    q, k, v = strided[:3]
    out = flash_attn_func(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                          causal=point["causal"])
    out = (out[0] if isinstance(out, tuple) else out).transpose(1, 2)
    calls["fa4 bwd bshd"] = lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
    return calls


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", nargs="+", required=True,
                        help="BxHxSxD[-kvN]-causal|noncausal")
    parser.add_argument("--catalog", help="results database swr reads (default: swr's)")
    parser.add_argument("--target-seconds", type=float, default=0.5)
    parser.add_argument("--out", help="write every figure as JSON here")
    args = parser.parse_args(argv)
    points = [parse_point(p) for p in args.points]
    torch, swr_torch, dtype, catalog, props, flush = gpu_session("bf16", args.catalog)
    results = {"device": props.name, "points": []}
    for point in points:
        calls = timed_calls(torch, swr_torch, catalog, point, dtype)
        run_log = []
        summaries = device_timing.time_interleaved(
            torch, calls, flush, target_s=args.target_seconds, order="balanced",
            seed=zlib.crc32(point["name"].encode()), run_log=run_log)
        work = {"bwd": 2.5 * flops(point), "step": 3.5 * flops(point)}
        for name, summary in summaries.items():
            pass_name = name.split()[1]
            summary["tflops"] = work[pass_name] / (summary["median_ms"] * 1e-3) / 1e12
            print(f"{point['name']:28} {name:16} {summary['median_ms']:9.3f} ms "
                  f"{summary['tflops']:7.1f} TFLOP/s", flush=True)
        results["points"].append({"point": point["name"], "summaries": summaries,
                                  "runs": run_log})
    if args.out:
        with open(args.out, "w") as file:
            json.dump(results, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
