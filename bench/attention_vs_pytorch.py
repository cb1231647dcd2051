#!/usr/bin/env python3
"""swr's attention against PyTorch's FlashAttention-2 and cuDNN SDPA backends on a few shapes.

For each shape the runtime first chooses swr's variant from a catalog (a results database or an
export directory: "exact" for a tuned shape, else "nearest"; a shape nothing tuned serves is
reported as "untuned" and swr is left out), then swr, called through swr.torch.attention
(fallback="error", over libswr_runtime.so) on PyTorch's tensors and stream, and each peer are checked
against the fused reference and timed interleaved, on the same inputs, with the same L2 flush
(device_timing.py). One variant per shape, the one a program would run, timed as often as the
peers: not the best of many.

Run on a GPU machine from the repository root, after building:
    export PYTHONPATH=python SWR_RUNTIME_LIBRARY=build/lib/libswr_runtime.so
    python3 bench/attention_vs_pytorch.py --gpu h200 --catalog kernels-h200/ \\
        --out bench/results/attention-h200

--points BxHxSxD[-kvN]-causal|-noncausal ... names each point with its own B*H instead (e.g.
enough work for every peer's run to last >= 1 ms, as bench/tuned_attention_device_run.sh does);
"-kvN" makes K and V N heads (grouped-query: swr.torch and SDPA with enable_gqa=True), e.g.
1x32x8192x128-kv8-causal for Llama-3's attention.

bench/peer_grid.py is the wider comparison (a grid of shapes, every SDPA backend, cuBLAS).
"""
import argparse
import json
import os
import sys
import time

import device_timing
import grid_points
import ratio_table
import run_record
import swr_runtime
from attention_peers import AttentionBench

# The shapes of issue 2's acceptance check: S in {16K, 128K}, D in {64, 128}, causal and not.
DEFAULT_SHAPES = ["8x8x16384", "8x1x131072"]
PEERS = (("flash2", "FLASH_ATTENTION"), ("cudnn", "CUDNN_ATTENTION"))
REGIME = "shapes"


def parse_shape(text):
    """"BxHxS" -> (B, H, S); bad text exits 2 naming it."""
    try:
        b, h, s = (int(x) for x in text.split("x"))
    except ValueError:
        print(f"attention_vs_pytorch: bad shape '{text}': allowed BxHxS, e.g. 8x1x131072",
              file=sys.stderr)
        sys.exit(2)
    return b, h, s


def parse_point(text, dtype):
    """grid_points.parse_point for an attention point; bad text exits 2 naming it."""
    try:
        point = grid_points.parse_point(text, dtype, REGIME)
        if point.family != "attention":
            raise ValueError(f"bad point '{text}': allowed attention points only here")
    except ValueError as error:
        print(f"attention_vs_pytorch: {error}", file=sys.stderr)
        sys.exit(2)
    return point


def shape_points(shapes, head_dims, dtype):
    points = []
    for shape in shapes:
        b, h, s = parse_shape(shape)
        for d in head_dims:
            for causal in (False, True):
                points.append(grid_points.AttentionPoint(REGIME, b, h, s, d, dtype, causal))
    return points


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", default="h200", help="GPU name to look up in the catalog")
    parser.add_argument("--catalog", required=True,
                        help="results database or export directory the runtime chooses from")
    parser.add_argument("--shapes", nargs="+", default=DEFAULT_SHAPES, help="BxHxS, S_q = S_kv")
    parser.add_argument("--head-dims", nargs="+", type=int, default=[64, 128])
    parser.add_argument("--points", nargs="+",
                        help="BxHxSxD[-kvN]-causal|-noncausal, each its own point (instead of "
                             "--shapes x --head-dims x both masks)")
    parser.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    parser.add_argument("--min-rounds", type=int, default=3)
    parser.add_argument("--max-rounds", type=int, default=20)
    parser.add_argument("--target-seconds", type=float, default=0.3)
    parser.add_argument("--out", required=True, help="directory for results.json and results.csv")
    args = parser.parse_args(argv)
    points = ([parse_point(text, args.dtype) for text in args.points] if args.points
              else shape_points(args.shapes, args.head_dims, args.dtype))

    import torch

    catalog = swr_runtime.open_catalog(args.catalog)
    torch.manual_seed(int(time.time()))
    device = torch.cuda.get_device_properties(0)
    torch.zeros(1, device="cuda")  # PyTorch's primary context is current from here on
    os.makedirs(args.out, exist_ok=True)
    flush = device_timing.L2Flush(torch, device.L2_cache_size)
    timing = {"target_s": args.target_seconds, "min_reps": args.min_rounds,
              "max_reps": args.max_rounds}
    bench = AttentionBench(torch, flush, timing, peers=PEERS)
    print(f"# {device.name}, {device.multi_processor_count} SMs, torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}; swr from {catalog.description}", flush=True)

    entries = []
    for point in points:
        entry = dict(point.as_json(), describe=point.describe())
        if not point.swr_supported():
            entry.update(swr_config=None, swr_config_source="unsupported",
                         swr_note="swr has attention kernels for head dims "
                                  + ", ".join(map(str, grid_points.SWR_HEAD_DIMS)) + " only")
            swr = {"status": "unsupported", "note": entry["swr_note"]}
        else:
            entry.update(swr_runtime.attention_choice(catalog, args.gpu, point))
            if entry["swr_config"] is None:
                swr = {"status": "untuned", "note": entry["swr_note"]}
            else:
                swr = {"call": swr_runtime.attention_call(catalog, args.gpu, point)}
        entry["candidates"] = bench.run(point, swr)
        entry["candidates"]["swr"].update(config=entry["swr_config"],
                                          choice=entry["swr_config_source"])
        entries.append(entry)
        ratios = [f"swr/{p} {r:.2f}x" for p, _ in PEERS
                  if (r := ratio_table.ratio(entry, p)) is not None]
        print(f"{entry['describe']}: swr {entry['swr_config'] or '-'} ({entry['swr_note']}); "
              + (", ".join(ratios) or "no ratio"), flush=True)

    document = {
        "schema": "swr-attention-vs-pytorch/2",
        "record": dict(run_record.command_record(os.path.relpath(__file__, swr_runtime.REPOSITORY),
                                                 argv),
                       **run_record.software_record(torch), swr_catalog=catalog.description),
        "method": {"timing": device_timing.METHOD.format(
            order="rotating", target_s=args.target_seconds, min_reps=args.min_rounds,
            max_reps=args.max_rounds),
                   "swr": "the runtime's choice from the catalog, called through "
                          "swr.torch.attention (fallback='error') over libswr_runtime.so"},
        "points": entries}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(document, f, indent=1)
    ratio_table.write_csv(os.path.join(args.out, "results.csv"), entries)
    print("\n" + ratio_table.summary_table(entries, {REGIME: "Shapes"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
