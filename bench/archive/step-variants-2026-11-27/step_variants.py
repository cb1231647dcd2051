"""The tuner's top backward variants of a point, each in the training step beside FA4: does the
step rank them as the tuner did, and does any beat FA4 where the pick does not? bench/training_step.py's
calls and timing (device_timing.py, balanced order, L2 flushed before every run); swr runs each
variant from a catalog holding only it (make_catalogs.py).

    python3 step_variants.py VARIANTS_JSON [--precompile] [--out results.json]
"""
import argparse
import json
import os
import sys
import zlib

sys.path.insert(0, os.environ.get("SWR_BENCH", os.path.dirname(__file__)))
import device_timing  # noqa: E402
import training_step  # noqa: E402


def forward_of(torch, swr_torch, label, step, variants, name, root, point, q, k, v):
    """The output of the candidate's forward with its autograd graph, for timing its backward."""
    import swr
    if label == "fa4":
        from flash_attn.cute.interface import flash_attn_func
        out = flash_attn_func(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                              causal=point["causal"])
        out = out[0] if isinstance(out, tuple) else out
        return out.transpose(1, 2)
    entry = variants[name][int(label.split("#")[1])]
    return swr_torch.attention(q, k, v, is_causal=point["causal"],
                               enable_gqa=point["kv_heads"] != point["heads"], fallback="error",
                               catalog=swr.Catalog(os.path.join(root, entry["catalog"])))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("variants")
    parser.add_argument("--precompile", action="store_true", help="swr's steps once each, no FA4")
    parser.add_argument("--target-seconds", type=float, default=1.0)
    parser.add_argument("--mode", choices=("step", "backward", "sustained"), default="step",
                        help="step: fwd+bwd interleaved from a flushed L2; backward: the backward "
                             "alone (its forward run before, untimed) interleaved from a flushed L2; "
                             "sustained: fwd+bwd back to back for 1.5 s each, two rounds")
    parser.add_argument("--out")
    args = parser.parse_args()
    root = os.path.dirname(os.path.abspath(args.variants))
    variants = json.load(open(args.variants))
    import torch
    import swr
    import swr.torch as swr_torch
    dtype = torch.bfloat16
    flush = device_timing.L2Flush(torch, torch.cuda.get_device_properties(0).L2_cache_size)
    results = {"device": torch.cuda.get_device_name(0), "mode": args.mode, "points": []}
    for name, entries in variants.items():
        point = training_step.parse_point(name)
        q, k, v, grad = training_step.inputs(torch, point, dtype)
        steps = {}
        for entry in entries:
            catalog = swr.Catalog(os.path.join(root, entry["catalog"]))
            found = training_step.candidates(torch, swr_torch, catalog, point, dtype)
            explained = swr_torch.explain(q, k, v, is_causal=point["causal"],
                                          enable_gqa=point["kv_heads"] != point["heads"],
                                          catalog=catalog)
            ran = explained["backward"].get("variant")
            assert ran == entry["variant"], (ran, entry["variant"])
            steps[f"swr#{entry['rank']}"] = found["swr"]
            if "fa4" not in steps and not args.precompile and not isinstance(found["fa4"], str):
                steps["fa4"] = found["fa4"]
        for label, step in steps.items():
            error = training_step.check(torch, step, point, dtype)
            assert error <= training_step.TOLERANCE["bfloat16"], (name, label, error)
        if args.precompile:
            for step in steps.values():
                step(q, k, v, grad)
            torch.cuda.synchronize()
            print(name, "compiled", flush=True)
            continue
        if args.mode == "backward":
            outs = {label: forward_of(torch, swr_torch, label, step, variants, name, root, point,
                                      q, k, v) for label, step in steps.items()}
            timed = {label: (lambda out=out: torch.autograd.grad(out, (q, k, v), grad,
                                                                 retain_graph=True))
                     for label, out in outs.items()}
        else:
            timed = {label: (lambda step=step: step(q, k, v, grad)) for label, step in steps.items()}
        if args.mode == "sustained":
            times = {label: [] for label in timed}
            for _ in range(2):
                for label, call in timed.items():
                    times[label].append(device_timing.sustained_ms(torch, call, 1.5))
            summaries = {label: {"median_ms": min(t), "min_ms": min(t), "p95_ms": max(t),
                                 "runs": len(t)} for label, t in times.items()}
        else:
            summaries = device_timing.time_interleaved(
                torch, timed, flush, target_s=args.target_seconds, max_reps=40, order="balanced",
                seed=zlib.crc32(name.encode()))
        fa4 = summaries["fa4"]["median_ms"]
        rows = []
        for entry in entries:
            ms = summaries[f"swr#{entry['rank']}"]["median_ms"]
            rows.append(dict(entry, step_ms=ms, fa4_over_swr=fa4 / ms,
                             runs=summaries[f"swr#{entry['rank']}"]["runs"]))
            print(f"{name:28s} #{entry['rank']} {entry['variant']:58s} tuner {entry['tuner_ms']:8.3f}"
                  f" step {ms:8.3f}  fa4/swr {fa4 / ms:.3f}", flush=True)
        print(f"{name:28s} fa4 step {fa4:8.3f} ({summaries['fa4']['runs']} runs)", flush=True)
        results["points"].append({"point": name, "fa4_ms": fa4, "swr": rows,
                                  "summaries": summaries})
    if args.out:
        json.dump(results, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
