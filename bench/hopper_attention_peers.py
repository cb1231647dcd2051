#!/usr/bin/env python3
"""Peers for bench/hopper_attention_harness.cpp: times torch scaled_dot_product_attention with the
cuDNN and FlashAttention(-2) backends on the shapes in the harness's timings.csv, with the same
method (CUDA events, a 512 MB L2 flush before each run, median of 10 after one warm-up), and prints
the table swr / cuDNN, swr / FA2 (best swr variant per shape).
Usage: python3 hopper_attention_peers.py [timings.csv] [table.md]"""
import csv
import statistics
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

timings = sys.argv[1] if len(sys.argv) > 1 else "timings.csv"
table_path = sys.argv[2] if len(sys.argv) > 2 else "table.md"

rows = list(csv.DictReader(open(timings)))
shapes = []
for r in rows:
    key = (int(r["b"]), int(r["h"]), int(r["s"]), int(r["d"]), int(r["causal"]))
    if key not in shapes:
        shapes.append(key)

flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")


def time_sdpa(backend, q, k, v, causal):
    with sdpa_kernel(backend):
        torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
        ms = []
        for i in range(10):
            flush.fill_(i & 0xFF)
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            e1.record()
            e1.synchronize()
            ms.append(e0.elapsed_time(e1))
    return statistics.median(ms)


out = ["| B | H | S | D | causal | swr TFLOP/s | swr config | cuDNN | FA2 | swr/cuDNN | swr/FA2 |",
       "|---|---|---|---|---|---|---|---|---|---|---|"]
for (b, h, s, d, causal) in shapes:
    torch.manual_seed(0)
    q, k, v = (torch.rand(b, h, s, d, device="cuda", dtype=torch.float16) * 2 - 1 for _ in range(3))
    flops = 4.0 * b * h * s * s * d / (2.0 if causal else 1.0)
    res = {}
    for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION)):
        try:
            ms = time_sdpa(backend, q, k, v, bool(causal))
            res[name] = flops / (ms * 1e-3) / 1e12
            print(f"PEER b{b} h{h} s{s} d{d} causal{causal} {name} {ms:.3f} ms {res[name]:.1f} TFLOP/s",
                  flush=True)
        except Exception as e:  # backend unavailable for this shape
            print(f"PEER b{b} h{h} s{s} d{d} causal{causal} {name} failed: {e}", flush=True)
            res[name] = float("nan")
    mine = [r for r in rows if (int(r["b"]), int(r["h"]), int(r["s"]), int(r["d"]), int(r["causal"]))
            == (b, h, s, d, causal)]
    best = max(mine, key=lambda r: float(r["tflops"]))
    t = float(best["tflops"])
    out.append(f"| {b} | {h} | {s} | {d} | {causal} | {t:.1f} | {best['variant']} | {res['cudnn']:.1f} | "
               f"{res['fa2']:.1f} | {t / res['cudnn']:.2f} | {t / res['fa2']:.2f} |")
    del q, k, v
print("\n".join(out))
open(table_path, "w").write("\n".join(out) + "\n")
