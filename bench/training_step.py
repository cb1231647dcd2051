#!/usr/bin/env python3
"""A training step of attention, head to head: swr (swr.torch.attention under autograd: its
forward writing the log-sum-exp, then its tuned backward), FlashAttention-4 (flash_attn.cute, where
importable), cuDNN and FlashAttention-2 (PyTorch SDPA's backends), on the same inputs, timed
interleaved in a balanced order (every candidate right after every other equally often: --order),
with the L2 flushed before every run (device_timing.py; the results keep every run and the call
before it). Each point reports, per candidate, the forward + backward time and TFLOP/s (FLOPs =
4 B H S^2 D, halved for causal, the backward counted as 2.5x the forward: 3.5x in all) and the
backward alone (fwd+bwd minus the forward, both medians of the same interleaved run), and swr's
ratio to the faster of FA4 and cuDNN. Every candidate's dQ, dK and dV are checked against SDPA's
math path in fp32 on a small copy of the point first (the same dtype bound as the forward); swr
must run its own kernels for both passes (explain() says so), else the point says why and is left
out.

    python3 bench/training_step.py --catalog tuned.db --out results.json
    python3 bench/training_step.py --points 2x16x16384x128-causal --catalog tuned.db
    python3 bench/training_step.py --by-predecessor results.json [more.json.xz ...]
    python3 bench/training_step.py --compare results.json other.json.xz
"""
import argparse
import json
import lzma
import statistics
import sys
import time
import zlib

import device_timing

# Issue 27's points: S in {4096, 16384, 32768} x D in {64, 128} x causal or not (B x H chosen to
# keep ~16-32k tokens of batch), GQA 32/8 at D128, D256.
DEFAULT_POINTS = (
    [f"{b}x{h}x{s}x{d}-{m}" for s, b in ((4096, 4), (16384, 2), (32768, 1)) for d, h in
     ((64, 32), (128, 16)) for m in ("noncausal", "causal")]
    + ["1x32x32768x128-kv8-causal", "1x8x8192x256-causal", "1x8x8192x256-noncausal"])
TOLERANCE = {"float16": 2e-3, "bfloat16": 1e-2}


def parse_point(text):
    """BxHxSxD[-kvN]-causal|noncausal -> dict."""
    parts = text.split("-")
    dims = [int(x) for x in parts[0].split("x")]
    if len(dims) != 4 or parts[-1] not in ("causal", "noncausal"):
        raise ValueError(f"point {text!r}: allowed BxHxSxD[-kvN]-causal|noncausal")
    kv = int(parts[1][2:]) if len(parts) == 3 and parts[1].startswith("kv") else dims[1]
    return {"batch": dims[0], "heads": dims[1], "seq": dims[2], "head_dim": dims[3],
            "kv_heads": kv, "causal": parts[-1] == "causal", "name": text}


def flops(point):
    full = 4.0 * point["batch"] * point["heads"] * point["seq"] ** 2 * point["head_dim"]
    return full / 2 if point["causal"] else full


def candidates(torch, swr_torch, catalog, point, dtype):
    """{name: step(q, k, v, grad) -> (out, dq, dk, dv)} for every peer that runs here."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    gqa = point["kv_heads"] != point["heads"]
    found = {}

    def swr_step(q, k, v, grad):
        out = swr_torch.attention(q, k, v, is_causal=point["causal"], enable_gqa=gqa,
                                  fallback="error", catalog=catalog)
        dq, dk, dv = torch.autograd.grad(out, (q, k, v), grad)
        return out, dq, dk, dv
    found["swr"] = swr_step

    for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                          ("flash2", SDPBackend.FLASH_ATTENTION)):
        def sdpa_step(q, k, v, grad, backend=backend):
            with sdpa_kernel(backend):
                out = F.scaled_dot_product_attention(q, k, v, is_causal=point["causal"],
                                                     enable_gqa=gqa)
            dq, dk, dv = torch.autograd.grad(out, (q, k, v), grad)
            return out, dq, dk, dv
        found[name] = sdpa_step
    try:
        from flash_attn.cute.interface import flash_attn_func

        def fa4_step(q, k, v, grad):
            # FA4 takes [B, S, H, D]: the same tensors seen transposed (no copy).
            out = flash_attn_func(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                  causal=point["causal"])
            out = out[0] if isinstance(out, tuple) else out
            out = out.transpose(1, 2)
            dq, dk, dv = torch.autograd.grad(out, (q, k, v), grad)
            return out, dq, dk, dv
        found["fa4"] = fa4_step
    except Exception as error:  # not installed here: said in the results
        found["fa4"] = f"unavailable: {str(error).splitlines()[0][:200]}"
    return found


def forward_calls(swr_torch, catalog, point, q, k, v):
    """{name: the forward alone on q, k, v} for each candidate of candidates() (FA4 where it is
    installed), the same calls as their steps' forwards."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    gqa = point["kv_heads"] != point["heads"]
    calls = {"swr": lambda: swr_torch.attention(q, k, v, is_causal=point["causal"],
                                                enable_gqa=gqa, fallback="error",
                                                catalog=catalog)}
    for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                          ("flash2", SDPBackend.FLASH_ATTENTION)):
        def sdpa_forward(backend=backend):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=point["causal"],
                                                      enable_gqa=gqa)
        calls[name] = sdpa_forward
    try:
        from flash_attn.cute.interface import flash_attn_func
    except Exception:  # not installed here: candidates() says so for its step
        return calls
    calls["fa4"] = lambda: flash_attn_func(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), causal=point["causal"])
    return calls


def inputs(torch, point, dtype, seq=None, batch=None):
    """Q [B, S, H, D] projections seen as [B, H, S, D] (what a model hands attention), K, V with
    their heads, and the output gradient; all requiring grad."""
    seq = seq or point["seq"]
    batch = batch or point["batch"]
    make = lambda h: torch.randn(batch, seq, h, point["head_dim"], device="cuda",
                                 dtype=dtype).transpose(1, 2).requires_grad_(True)
    q, k, v = make(point["heads"]), make(point["kv_heads"]), make(point["kv_heads"])
    grad = torch.randn(batch, point["heads"], seq, point["head_dim"], device="cuda", dtype=dtype)
    return q, k, v, grad


def check(torch, step, point, dtype):
    """The worst relative error of out, dQ, dK, dV against SDPA math in fp32 on a small copy."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v, grad = inputs(torch, point, dtype, seq=min(point["seq"], 1031), batch=1)
    got = step(q, k, v, grad)
    q32, k32, v32 = (t.detach().float().requires_grad_(True) for t in (q, k, v))
    with sdpa_kernel(SDPBackend.MATH):
        out = F.scaled_dot_product_attention(q32, k32, v32, is_causal=point["causal"],
                                             enable_gqa=point["kv_heads"] != point["heads"])
    want = (out,) + torch.autograd.grad(out, (q32, k32, v32), grad.float())
    return max(((g.float() - w).norm() / w.norm()).item() for g, w in zip(got, want))


def run_point(torch, swr_torch, catalog, point, dtype, flush, target_s, order="balanced"):
    result = {"point": point["name"], "dtype": str(dtype).removeprefix("torch."),
              "flops_forward": flops(point), "candidates": {}}
    steps = candidates(torch, swr_torch, catalog, point, dtype)
    q, k, v, grad = inputs(torch, point, dtype)
    explained = swr_torch.explain(q, k, v, is_causal=point["causal"],
                                  enable_gqa=point["kv_heads"] != point["heads"], catalog=catalog)
    result["swr_explain"] = explained
    if explained["runs"] != "swr" or explained["backward"]["runs"] != "swr":
        steps["swr"] = ("not swr's kernels: " + explained.get("why_not_swr", "") +
                        explained["backward"].get("why_not_swr", ""))
    forwards = forward_calls(swr_torch, catalog, point, q, k, v)
    timed = {}
    for name, step in steps.items():
        if isinstance(step, str):
            result["candidates"][name] = {"status": step}
            continue
        try:
            error = check(torch, step, point, dtype)
        except Exception as failure:  # a peer refusing the shape: said, not fatal
            result["candidates"][name] = {"status": "refused: " + str(failure).splitlines()[0]}
            continue
        status = "ok" if error <= TOLERANCE[result["dtype"]] else "wrong"
        result["candidates"][name] = {"status": status, "relative_error": error}
        if status != "ok":
            continue
        timed[name + " fwd+bwd"] = lambda step=step: step(q, k, v, grad)
        timed[name + " fwd"] = forwards[name]
    run_log = []
    seed = zlib.crc32(point["name"].encode())  # each point its own orders
    summaries = device_timing.time_interleaved(torch, timed, flush, target_s=target_s,
                                               order=order, seed=seed, run_log=run_log)
    result["runs"] = run_log
    fwd_flops = flops(point)
    for name, entry in result["candidates"].items():
        if entry["status"] != "ok":
            continue
        step_ms = summaries[name + " fwd+bwd"]["median_ms"]
        fwd_ms = summaries[name + " fwd"]["median_ms"]
        entry.update(fwd_bwd_ms=step_ms, fwd_ms=fwd_ms, bwd_ms=step_ms - fwd_ms,
                     fwd_bwd_tflops=3.5 * fwd_flops / (step_ms * 1e-3) / 1e12,
                     bwd_tflops=2.5 * fwd_flops / ((step_ms - fwd_ms) * 1e-3) / 1e12,
                     fwd_tflops=fwd_flops / (fwd_ms * 1e-3) / 1e12,
                     timing=summaries[name + " fwd+bwd"])
    peers = [result["candidates"][p]["fwd_bwd_ms"] for p in ("fa4", "cudnn")
             if result["candidates"].get(p, {}).get("status") == "ok"]
    if result["candidates"]["swr"]["status"] == "ok" and peers:
        result["swr_vs_faster_of_fa4_cudnn"] = min(peers) / result["candidates"]["swr"]["fwd_bwd_ms"]
    return result


def markdown_table(results):
    """A results file (--out) as the table docs/training.md shows: fwd+bwd TFLOP/s of each
    candidate, swr over the faster of FA4 and cuDNN, and the backward alone of swr and FA4."""
    def cell(entry, key):
        return f"{entry[key]:.1f}" if key in entry else entry.get("status", "-")

    lines = ["| B x H x S x D, mask | swr | FA4 | cuDNN | FA2 | swr / best | swr backward alone |"
             " FA4 backward alone |", "|---|---|---|---|---|---|---|---|"]
    for result in results["points"]:
        point = parse_point(result["point"])
        heads = (f"{point['heads']}/{point['kv_heads']}" if point["kv_heads"] != point["heads"]
                 else f"{point['heads']}")
        shape = (f"{point['batch']} x {heads} x {point['seq']} x {point['head_dim']}"
                 + (", causal" if point["causal"] else ""))
        candidates = result["candidates"]
        ratio = result.get("swr_vs_faster_of_fa4_cudnn")
        cells = [cell(candidates.get(name, {}), "fwd_bwd_tflops")
                 for name in ("swr", "fa4", "cudnn", "flash2")]
        cells += ["-" if ratio is None else f"{ratio:.3f}",
                  cell(candidates.get("swr", {}), "bwd_tflops"),
                  cell(candidates.get("fa4", {}), "bwd_tflops")]
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def load_results(path):
    """A results file (--out), xz-compressed or not."""
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as file:
        return json.load(file)


def merged_results(results_list):
    """Results files of one run split over GPUs (each its share of the points) as one, the
    points in the grid's order (DEFAULT_POINTS, then any others as given)."""
    points = [point for results in results_list for point in results["points"]]
    points.sort(key=lambda point: grid_rank(point["point"]))
    return {**results_list[0], "points": points}


def grid_rank(name):
    """A point's sort key: the grid's points (DEFAULT_POINTS) in its order, then any others (a
    stable sort keeps them as given)."""
    return DEFAULT_POINTS.index(name) if name in DEFAULT_POINTS else len(DEFAULT_POINTS)


def predecessor_table(results_list):
    """Results files (--out) as each fwd+bwd candidate's runs by the call timed before it, over
    the candidate's median at the point (the `runs` of each point): per point for one file, then
    the mean over every point and file given: whether what ran before a candidate moves its
    figure."""
    lines, pooled = [], {}
    for results in results_list:
        for result in results["points"]:
            by = {}
            for run in result.get("runs", []):
                if run["name"].endswith(" fwd+bwd"):
                    by.setdefault(run["name"], {}).setdefault(run["after"], []).append(run["ms"])
            for name, after in sorted(by.items()):
                overall = statistics.median(ms for times in after.values() for ms in times)
                for previous, times in after.items():
                    pooled.setdefault((name, previous), []).extend(ms / overall for ms in times)
                if len(results_list) == 1:
                    cells = [f"{previous} {statistics.median(times) / overall:.3f} ({len(times)})"
                             for previous, times in sorted(after.items())]
                    lines.append(f"{result['point']:28} {name:16} {overall:9.3f} ms | "
                                 + ", ".join(cells))
    names = sorted({name for name, _ in pooled})
    lines.append(f"mean of run / median over every point, by the call before (runs): "
                 f"{len(results_list)} file(s)")
    lines.append(f"{'before':16}" + "".join(f"{name:>22}" for name in names))
    for previous in sorted({previous for _, previous in pooled}):
        cells = [pooled.get((name, previous)) for name in names]
        lines.append(f"{previous:16}" + "".join(
            f"{f'{statistics.mean(c):.3f} ({len(c)})':>22}" if c else f"{'-':>22}"
            for c in cells))
    return "\n".join(lines)


def compare_table(results_list, paths):
    """Results files (--out) side by side, a row each point any of them measured: swr over the
    faster of FA4 and cuDNN, and FA4's and swr's fwd+bwd TFLOP/s, a column each file ("-" where a
    file lacks the point or the figure)."""
    lines = ["files: " + ", ".join(f"[{i}] {path}" for i, path in enumerate(paths))]
    head = "".join(f"{f'swr/best[{i}]':>13}" for i in range(len(paths)))
    head += "".join(f"{f'fa4[{i}]':>9}" for i in range(len(paths)))
    lines.append(f"{'point':28}{head}" + "".join(f"{f'swr[{i}]':>9}" for i in range(len(paths))))
    by_point = [{row["point"]: row for row in results["points"]} for results in results_list]
    names = list(dict.fromkeys(name for points in by_point for name in points))
    for name in names:
        rows = [points.get(name, {}) for points in by_point]
        ratios = [row.get("swr_vs_faster_of_fa4_cudnn") for row in rows]
        rates = [[row.get("candidates", {}).get(candidate, {}).get("fwd_bwd_tflops")
                  for row in rows] for candidate in ("fa4", "swr")]
        line = f"{name:28}" + "".join(
            f"{r:13.3f}" if r is not None else f"{'-':>13}" for r in ratios)
        for column in rates:
            line += "".join(f"{r:9.1f}" if r is not None else f"{'-':>9}" for r in column)
        lines.append(line)
    return "\n".join(lines)


def rounds_table(results_list):
    """Results files that are rounds of one grid (--out, the same points) as one markdown table:
    a row each point, swr over the faster of FA4 and cuDNN in every round, its median, lowest and
    highest, how many rounds it was at or above 1.0, and the medians of swr's and FA4's backward
    alone, then forward alone, in TFLOP/s: what issue 27's criterion reads from a run of several
    rounds, and which half of the step decides it."""
    by_point = [{row["point"]: row for row in results["points"]} for results in results_list]
    names = sorted(dict.fromkeys(name for points in by_point for name in points), key=grid_rank)
    lines = [f"| point | swr / best, round by round ({len(results_list)}) | median | lowest |"
             " highest | rounds >= 1.0 | swr backward alone | FA4 backward alone |"
             " swr forward alone | FA4 forward alone |", "|---" * 10 + "|"]
    for name in names:
        rows = [points.get(name, {}) for points in by_point]
        ratios = [row.get("swr_vs_faster_of_fa4_cudnn") for row in rows]
        measured = [r for r in ratios if r is not None]

        def median_rate(candidate, key="bwd_tflops"):
            rates = [row.get("candidates", {}).get(candidate, {}).get(key) for row in rows]
            rates = [r for r in rates if r is not None]
            return f"{statistics.median(rates):.1f}" if rates else "-"

        cells = [" ".join("-" if r is None else f"{r:.3f}" for r in ratios)]
        cells += ([f"{statistics.median(measured):.3f}", f"{min(measured):.3f}",
                   f"{max(measured):.3f}", f"{sum(r >= 1.0 for r in measured)} of {len(measured)}"]
                  if measured else ["-"] * 4)
        cells += [median_rate("swr"), median_rate("fa4"), median_rate("swr", "fwd_tflops"),
                  median_rate("fa4", "fwd_tflops")]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gpu_session(dtype_name, catalog_path):
    """What a run on the GPU starts from: (torch, swr.torch, the dtype of "bf16" or "f16", the
    swr.Catalog at catalog_path or None for swr's default, the device's properties, an L2 flush
    for it)."""
    import torch
    import swr
    import swr.torch as swr_torch

    dtype = torch.bfloat16 if dtype_name == "bf16" else torch.float16
    catalog = swr.Catalog(catalog_path) if catalog_path else None
    props = torch.cuda.get_device_properties(0)
    return (torch, swr_torch, dtype, catalog, props,
            device_timing.L2Flush(torch, props.L2_cache_size))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", nargs="+", default=DEFAULT_POINTS,
                        help="BxHxSxD[-kvN]-causal|noncausal (default: issue 27's grid)")
    parser.add_argument("--dtype", choices=("bf16", "f16"), default="bf16")
    parser.add_argument("--catalog", help="results database or export swr reads (default: swr's)")
    parser.add_argument("--target-seconds", type=float, default=0.5,
                        help="timed seconds per candidate and point")
    parser.add_argument("--order", choices=device_timing.ORDERS, default="balanced",
                        help="the order of the candidates within a round (device_timing.py; "
                             "default: balanced)")
    parser.add_argument("--out", help="write every figure as JSON here")
    parser.add_argument("--table", metavar="RESULTS_JSON", nargs="+",
                        help="print results files (--out, or .xz) as one markdown table, in the "
                             "grid's order, and exit (no GPU): several are the GPUs of a split "
                             "run")
    parser.add_argument("--by-predecessor", metavar="RESULTS_JSON", nargs="+",
                        help="print each fwd+bwd candidate's runs by the call before it, over its "
                             "median, from results files (--out, or .xz), and exit (no GPU)")
    parser.add_argument("--compare", metavar="RESULTS_JSON", nargs="+",
                        help="print results files (--out, or .xz) side by side, points matched "
                             "by name, and exit (no GPU)")
    parser.add_argument("--rounds", metavar="RESULTS_JSON", nargs="+",
                        help="print results files (--out, or .xz) that are rounds of one grid as "
                             "one markdown table: each point's swr / best in every round, its "
                             "median, lowest and highest, and exit (no GPU)")
    args = parser.parse_args(argv)
    if args.rounds:
        print(rounds_table([load_results(path) for path in args.rounds]))
        return 0
    if args.table:
        print(markdown_table(merged_results([load_results(path) for path in args.table])))
        return 0
    if args.by_predecessor:
        print(predecessor_table([load_results(path) for path in args.by_predecessor]))
        return 0
    if args.compare:
        print(compare_table([load_results(path) for path in args.compare], args.compare))
        return 0
    points = [parse_point(p) for p in args.points]  # bad input refused before the GPU is touched

    torch, swr_torch, dtype, catalog, props, flush = gpu_session(args.dtype, args.catalog)
    results = {"device": props.name, "torch": torch.__version__,
               "method": device_timing.METHOD.format(order=args.order,
                                                     target_s=args.target_seconds, min_reps=3,
                                                     max_reps=20),
               "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "points": []}
    print(f"{'point':32} {'swr':>9} {'fa4':>9} {'cudnn':>9} {'flash2':>9} {'swr/best':>9}"
          f" {'swr bwd':>9}   (fwd+bwd TFLOP/s; swr bwd alone)")
    for point in points:
        result = run_point(torch, swr_torch, catalog, point, dtype, flush, args.target_seconds,
                           args.order)
        results["points"].append(result)
        cells = []
        for name in ("swr", "fa4", "cudnn", "flash2"):
            entry = result["candidates"].get(name, {})
            cells.append(f"{entry['fwd_bwd_tflops']:9.1f}" if "fwd_bwd_tflops" in entry
                         else f"{entry.get('status', '-')[:9]:>9}")
        ratio = result.get("swr_vs_faster_of_fa4_cudnn")
        bwd = result["candidates"].get("swr", {}).get("bwd_tflops")
        ratio_text = "-" if ratio is None else f"{ratio:.3f}"
        bwd_text = "-" if bwd is None else f"{bwd:.1f}"
        print(f"{point['name']:32} {' '.join(cells)} {ratio_text:>9} {bwd_text:>9}", flush=True)
        if args.out:
            with open(args.out, "w") as file:
                json.dump(results, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
