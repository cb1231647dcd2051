#!/usr/bin/env python3
"""swr's attention variants against PyTorch's SDPA backends, side by side in one run.

For each shape, `swr-tune compile --out` renders and compiles the candidate variants; this script
loads their cubins through the CUDA driver (ctypes, in the same process and context as PyTorch),
checks each against PyTorch's output, and times every candidate and every peer interleaved, on the
same inputs, with device events, after a warm-up, with the L2 flushed before every timed run.

Run on a GPU machine from the repository root, after building:
    python3 bench/attention_vs_pytorch.py --gpu h200 --out bench/results/attention-h200

bench/peer_grid.py is the wider comparison (a grid of shapes, every SDPA backend, cuBLAS); this
one times many variants of a few shapes. Both load cubins with swr_kernels.py.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from swr_kernels import Driver, SwrVariant

# The shapes of issue 2's acceptance check: S in {16K, 128K}, D in {64, 128}, causal and not.
DEFAULT_SHAPES = ["8x8x16384", "8x1x131072"]
PEERS = {
    "flash2": SDPBackend.FLASH_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
}


def parse_shape(text):
    b, h, s = (int(x) for x in text.split("x"))
    return b, h, s


def compile_variants(swr_tune, gpu, b, h, s, d, causal, dtype, directory, keep):
    """Lists the space (`swr-tune space --json`), keeps the candidates, compiles only those."""
    problem = ["--gpu", gpu, "--batch", str(b), "--heads", str(h), "--seq", str(s),
               "--head-dim", str(d), "--dtype", dtype] + (["--causal"] if causal else [])
    space = json.loads(subprocess.run([swr_tune, "space", "--json"] + problem, check=True,
                                      capture_output=True, text=True).stdout)
    keys = [c["key"] for c in space["configs"] if keep(c["config"])]
    command = [swr_tune, "compile", "--out", directory] + problem
    for key in keys:
        command += ["--config", key]
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL)
    with open(os.path.join(directory, "kernels.json")) as f:
        manifest = json.load(f)
    return manifest, manifest["kernels"]


def candidate_filter(args):
    def keep(config):
        if args.all_variants:
            return True
        return (config["stages"] == 2 and config["swizzle"] == "head_major"
                and config["persistence"] in ("grid", "static"))
    return keep


def timed(fn, flush):
    flush()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def relative_error(out, ref):
    return ((out.float() - ref.float()).norm() / ref.float().norm()).item()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", default="h200", help="swr GPU profile to compile for (default h200)")
    parser.add_argument("--swr-tune", default="build/swr-tune", help="path to swr-tune")
    parser.add_argument("--shapes", nargs="+", default=DEFAULT_SHAPES, help="BxHxS, S_q = S_kv")
    parser.add_argument("--head-dims", nargs="+", type=int, default=[64, 128])
    parser.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    parser.add_argument("--reps", type=int, default=3, help="timed runs per candidate (median)")
    parser.add_argument("--all-variants", action="store_true", help="time the whole space, not the default candidates")
    parser.add_argument("--out", required=True, help="directory for results.json and results.csv")
    args = parser.parse_args()

    torch.manual_seed(int(time.time()))
    device = torch.cuda.get_device_properties(0)
    driver = Driver()
    torch.zeros(1, device="cuda")  # PyTorch's primary context is current from here on
    os.makedirs(args.out, exist_ok=True)
    dtype = torch.float16 if args.dtype == "f16" else torch.bfloat16
    tolerance = 2e-3 if args.dtype == "f16" else 1e-2
    scratch = torch.empty(2 * device.L2_cache_size // 4 * 4, dtype=torch.int32, device="cuda")
    flush = lambda: scratch.zero_()  # writes 2x the L2: every run starts from the same cache state

    points = []
    print(f"# {device.name}, {device.multi_processor_count} SMs, torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}", flush=True)
    for shape in args.shapes:
        b, h, s = parse_shape(shape)
        for d in args.head_dims:
            for causal in (False, True):
                flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
                q = torch.randn(b, h, s, d, device="cuda", dtype=dtype)
                k = torch.randn_like(q)
                v = torch.randn_like(q)
                counter = torch.zeros(1, dtype=torch.int32, device="cuda")
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    reference = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                with tempfile.TemporaryDirectory() as directory:
                    manifest, kernels = compile_variants(args.swr_tune, args.gpu, b, h, s, d, causal,
                                                         args.dtype, directory, candidate_filter(args))
                    candidates = {}
                    for kernel in kernels:
                        variant = SwrVariant(driver, directory, manifest["entry"], kernel,
                                             device.multi_processor_count)
                        out = torch.full_like(q, float("nan"))
                        variant.run(q, k, v, out, counter, causal)
                        torch.cuda.synchronize()
                        error = relative_error(out, reference)
                        if not (error < tolerance):
                            print(f"  {variant.key}: WRONG (relative error {error:.2e} vs flash2)")
                            continue
                        candidates["swr:" + variant.key] = lambda variant=variant, out=out: variant.run(
                            q, k, v, out, counter, causal)
                    for name, backend in PEERS.items():
                        def peer(backend=backend):
                            with sdpa_kernel(backend):
                                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        try:
                            peer()
                            candidates[name] = peer
                        except RuntimeError as error:
                            print(f"  peer {name} missing: {str(error).splitlines()[0]}")
                    for fn in candidates.values():  # warm-up
                        fn()
                    torch.cuda.synchronize()
                    times = {name: [] for name in candidates}
                    for _ in range(args.reps):  # interleaved: each round times every candidate once
                        for name, fn in candidates.items():
                            times[name].append(timed(fn, flush))
                del q, k, v, reference
                rows = {name: {"median_ms": statistics.median(t), "p95_ms": sorted(t)[max(0, math.ceil(0.95 * len(t)) - 1)],
                               "min_ms": min(t)} for name, t in times.items()}
                for row in rows.values():
                    row["tflops"] = flops / row["median_ms"] / 1e9
                swr_rows = {n: r for n, r in rows.items() if n.startswith("swr:")}
                best = min(swr_rows, key=lambda n: swr_rows[n]["median_ms"]) if swr_rows else None
                point = {"batch": b, "heads": h, "seq": s, "head_dim": d, "causal": causal,
                         "dtype": args.dtype, "variants_timed": len(swr_rows), "best": best,
                         "results": rows}
                points.append(point)
                line = f"B={b} H={h} S={s} D={d} causal={int(causal)}: "
                if best:
                    line += f"swr {rows[best]['tflops']:.0f} TFLOP/s ({best[4:]})"
                for peer_name in PEERS:
                    if peer_name in rows and best:
                        line += (f", {peer_name} {rows[peer_name]['tflops']:.0f}"
                                 f" (swr/{peer_name} {rows[peer_name]['median_ms'] / rows[best]['median_ms']:.2f}x)")
                print(line, flush=True)

    record = {"gpu": device.name, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
              "cuda": torch.version.cuda, "command": " ".join(sys.argv), "reps": args.reps,
              "method": "device events, 1 warm-up, median of reps, L2 flushed (2x L2 written) before every run, interleaved",
              "points": points}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(record, f, indent=1)
    with open(os.path.join(args.out, "results.csv"), "w") as f:
        f.write("batch,heads,seq,head_dim,causal,candidate,median_ms,p95_ms,min_ms,tflops\n")
        for p in points:
            for name, r in p["results"].items():
                f.write(f"{p['batch']},{p['heads']},{p['seq']},{p['head_dim']},{int(p['causal'])},{name},"
                        f"{r['median_ms']:.4f},{r['p95_ms']:.4f},{r['min_ms']:.4f},{r['tflops']:.1f}\n")
    print("\nswr best vs peers (throughput ratio swr/peer):")
    for peer_name in PEERS:
        ratios = [p["results"][peer_name]["median_ms"] / p["results"][p["best"]]["median_ms"]
                  for p in points if p["best"] and peer_name in p["results"]]
        if ratios:
            geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            print(f"  vs {peer_name}: min {min(ratios):.2f}x, geometric mean {geo:.2f}x over {len(ratios)} points")


if __name__ == "__main__":
    main()
