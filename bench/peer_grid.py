#!/usr/bin/env python3
"""The front door of bench/: swr against the peers installed on this machine, on the shapes you
name (--points) or on a grid of them (--regimes), printed as a table.

For every point the runtime first chooses swr's variant from a catalog (a results database or an
export directory: the tuned best of that shape, "exact", else the nearest tuned shape's,
"nearest", else "none" and swr is left out of that point), then swr, called as a PyTorch user
calls it (swr.torch.attention / matmul with fallback="error", over libswr_runtime.so, the same code
a program linking swr::Attention / swr::Gemm runs), and every peer are timed on the same inputs,
interleaved, with the same L2 flush (device_timing.py).

Peers: PyTorch SDPA's FLASH_ATTENTION (FlashAttention-2), CUDNN_ATTENTION, EFFICIENT_ATTENTION and
the unfused MATH path, and FlashAttention-4 (flash_attn.cute) where it is importable, for
attention; cuBLAS (torch.matmul) for GEMM. A peer this machine lacks or that refuses a shape is
reported as such, never a failure of the run. Grids: grid_points.py.

L2 misses: swr's come from the catalog (the tuner's CUPTI counters) for points tuned at exactly
that shape; the peers' only with --with-ncu, for a few points (ncu_misses.py), else they are left
out.

Output in --out: results.json (every point and candidate, the versions and the command:
run_record.py), results.csv (one row per point and candidate), table.txt (what is printed).
`swr-tune report --bench results.json` draws it.

On the GPU machine, with swr installed (`pip install .`; or from a build tree with
PYTHONPATH=python), from the repository root:
    python3 bench/peer_grid.py --gpu h200 --catalog results.db --out /tmp/bench \
        --points 1x16x16384x128-causal 4x16x4096x64-noncausal 4096x4096x4096
    python3 bench/peer_grid.py --gpu h200 --catalog kernels-h200/ --out /tmp/peer-grid
    python3 bench/peer_grid.py --gpu h200 --catalog results.db --out /tmp/peer-grid --quick
    python3 bench/peer_grid.py --dry-run --catalog ...   (the plan only: no GPU, no PyTorch)
"""
import argparse
import ctypes
import json
import os
import shutil
import sys
import tempfile
import time

import grid_points
import ncu_misses
import ratio_table
import run_record
import swr_runtime
from device_timing import METHOD

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNSUPPORTED_NOTE = ("swr has attention kernels for head dims "
                    + ", ".join(map(str, grid_points.SWR_HEAD_DIMS)) + " only")


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", default="h200",
                        help="GPU name to look up in the catalog, as `swr-tune gpus` names it")
    parser.add_argument("--catalog", metavar="PATH",
                        help="results database or export directory the runtime chooses from")
    parser.add_argument("--swr-tune", default=shutil.which("swr-tune") or "build/swr-tune",
                        help="path to swr-tune (its version goes into the record; default: the "
                             "one on the PATH, else build/swr-tune)")
    parser.add_argument("--points", nargs="+", metavar="POINT",
                        help="the points to measure instead of a grid: " + grid_points.POINT_FORMS)
    parser.add_argument("--dtype", default="f16", choices=["f16", "bf16"],
                        help="element type of the --points")
    parser.add_argument("--regimes", nargs="+", default=["short", "long", "models", "gemm"],
                        choices=["short", "long", "models", "gemm"])
    parser.add_argument("--quick", action="store_true", help="a few points of each regime")
    parser.add_argument("--out", help="directory for results.json, results.csv, table.txt")
    parser.add_argument("--target-seconds", type=float, default=0.3,
                        help="timed seconds per candidate and point, within the rounds' bounds")
    parser.add_argument("--min-rounds", type=int, default=3)
    parser.add_argument("--max-rounds", type=int, default=20)
    parser.add_argument("--time-budget", type=float, default=0,
                        help="seconds after which no new point starts (0: none); the rest are "
                             "recorded as skipped")
    parser.add_argument("--with-ncu", action="store_true",
                        help="also count L2 misses of every candidate with ncu, for a few points")
    parser.add_argument("--ncu-keys", nargs="+", default=list(ncu_misses.DEFAULT_KEYS),
                        metavar="KEY", help="problem keys of the --with-ncu points")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan (points and the runtime's choice for each) and stop")
    parser.add_argument("--ncu-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.points:
        try:
            args.point_list = [grid_points.parse_point(text, args.dtype) for text in args.points]
        except ValueError as error:
            parser.error(str(error))
    if not args.ncu_child and not args.catalog:
        parser.error("--catalog is required: a results database or an export directory")
    if not args.ncu_child and not args.dry_run and not args.out:
        parser.error("--out is required")
    return args


def selected_points(args):
    """The --points, else the grid of the --regimes."""
    if args.points:
        return args.point_list
    return grid_points.full_grid(args.regimes, args.quick)


def plan_points(points, catalog, gpu):
    """Each point's json entry with the runtime's choice of swr variant for it."""
    entries = []
    for point in points:
        entry = dict(point.as_json(), describe=point.describe(), candidates={})
        entries.append(entry)
        if point.family == "attention" and not point.swr_supported():
            entry.update(swr_config=None, swr_config_source="unsupported", swr_note=UNSUPPORTED_NOTE)
        elif point.family == "attention":
            entry.update(swr_runtime.attention_choice(catalog, gpu, point))
        else:
            entry.update(swr_runtime.gemm_choice(catalog, gpu, point))
    return entries


def print_plan(entries, peers_of):
    for e in entries:
        print(f"{e['describe']}: swr {e.get('swr_config') or '-'} ({e['swr_note']}); "
              f"peers {', '.join(peers_of(e))}")
    print(f"\n{len(entries)} points; {sum(1 for e in entries if e.get('swr_config'))} with an swr "
          f"variant (exact: {sum(1 for e in entries if e['swr_config_source'] == 'exact')}, "
          f"nearest: {sum(1 for e in entries if e['swr_config_source'] == 'nearest')})")


def planned_peers(entry):
    if entry["family"] == "attention":
        from attention_peers import PEERS
        return [name for name, _ in PEERS] + ["flash4"]
    return ["cublas"]


def swr_status(entry):
    """{"status", "note"} for a point swr does not run, None for one it runs."""
    if entry["swr_config_source"] == "unsupported":
        return {"status": "unsupported", "note": UNSUPPORTED_NOTE}
    if entry["swr_config_source"] == "none":
        return {"status": "untuned", "note": entry["swr_note"]}
    return None


def point_line(entry, peers):
    cells = []
    for name in ["swr"] + [p for p in peers if p in entry["candidates"]]:
        candidate = entry["candidates"][name]
        cells.append(f"{name} " + (f"{candidate['tflops']:.0f}" if ratio_table.ok(candidate)
                                   else candidate.get("status", "-")))
    ratios = [f"swr/{p} {r:.2f}" for p in peers if (r := ratio_table.ratio(entry, p)) is not None]
    return f"{entry['describe']}: " + ", ".join(cells) + " TFLOP/s" + (
        "; " + ", ".join(ratios) if ratios else "")


def write_results(args, document, entries):
    document["points"] = entries
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(document, f, indent=1)
    ratio_table.write_csv(os.path.join(args.out, "results.csv"), entries)


def cuda_driver_api():
    """The driver API version libcuda reports ("13.0"), for the record; None without it."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int()
    if driver.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return f"{version.value // 1000}.{version.value % 1000 // 10}"


def run_grid(args, entries, document, catalog):
    import torch

    from attention_peers import AttentionBench
    from device_timing import L2Flush
    from gemm_peers import GemmBench

    torch.manual_seed(int(time.time()))
    properties = torch.cuda.get_device_properties(0)
    torch.zeros(1, device="cuda")  # PyTorch's primary context is current from here on
    document["record"].update(run_record.software_record(torch))
    document["record"]["cuda_driver_api"] = cuda_driver_api()
    document["record"]["swr_catalog"] = catalog.description
    print(f"# {properties.name}, {properties.multi_processor_count} SMs, torch {torch.__version__}, "
          f"cuDNN {document['record']['cudnn']}, driver {document['record']['driver']}; swr from "
          f"{catalog.description}", flush=True)

    started = time.time()
    flush = L2Flush(torch, properties.L2_cache_size)
    timing = {"target_s": args.target_seconds, "min_reps": args.min_rounds,
              "max_reps": args.max_rounds}
    attention = AttentionBench(torch, flush, timing)
    gemm = GemmBench(torch, flush, timing)
    points = {p.key(): p for p in selected_points(args)}
    peers = list(ratio_table.PEER_ORDER)
    for index, entry in enumerate(entries):
        point = points[entry["key"]]
        if args.time_budget and time.time() - started > args.time_budget:
            entry["candidates"] = {"swr": {"status": "skipped", "note": "time budget spent"}}
            continue
        swr = swr_status(entry) or {"call": swr_call(torch, catalog, args.gpu, point)}
        entry["candidates"] = (attention if point.family == "attention" else gemm).run(point, swr)
        candidate = entry["candidates"]["swr"]
        candidate["config"] = entry.get("swr_config")
        candidate["choice"] = entry["swr_config_source"]
        tuned = entry.get("swr_tuned") or {}
        if tuned.get("l2_sector_misses") is not None:
            candidate["l2_sector_misses"] = tuned["l2_sector_misses"]
            candidate["l2_source"] = "tuner (CUPTI), swr catalog"
        print(f"[{index + 1}/{len(entries)} {time.time() - started:.0f}s] "
              + point_line(entry, peers), flush=True)
        write_results(args, document, entries)  # a killed run keeps what it measured
    document["record"]["grid_seconds"] = round(time.time() - started, 1)
    if args.with_ncu:
        add_ncu_misses(args, entries, points)


def swr_call(torch, catalog, gpu, point):
    """(inputs...) -> a call of swr.torch for `point` that returns its output."""
    if point.family == "attention":
        return swr_runtime.attention_call(catalog, gpu, point)
    return swr_runtime.gemm_call(catalog, gpu, point)


def add_ncu_misses(args, entries, points):
    ncu = ncu_misses.find_ncu()
    if ncu is None:
        print("# --with-ncu: ncu not found; peers' L2 misses are left out", flush=True)
        return
    with tempfile.TemporaryDirectory() as directory:
        for entry in entries:
            if entry["key"] not in args.ncu_keys or entry["family"] != "attention":
                continue
            for name, candidate in entry["candidates"].items():
                if not ratio_table.ok(candidate):
                    continue
                spec = {"point": points[entry["key"]].as_json(), "candidate": name,
                        "catalog": os.path.abspath(args.catalog), "gpu": args.gpu}
                misses, note = ncu_misses.count_misses(ncu, os.path.abspath(__file__), spec,
                                                       directory)
                candidate["ncu_l2_sector_misses"] = misses
                candidate["ncu_note"] = note
                if name != "swr" and misses is not None:
                    candidate["l2_sector_misses"], candidate["l2_source"] = misses, "ncu"
                print(f"# ncu {entry['describe']} {name}: {misses} ({note})", flush=True)


def ncu_child(spec_path):
    """One candidate's one call, bracketed for `ncu --profile-from-start off`."""
    import torch

    from attention_peers import AttentionBench

    with open(spec_path) as f:
        spec = json.load(f)
    fields = {k: spec["point"][k] for k in ("regime", "batch", "heads", "seq", "head_dim",
                                            "dtype", "causal")}
    point = grid_points.AttentionPoint(**fields, kv_heads=spec["point"].get("kv_heads", 0))
    q, k, v = AttentionBench.inputs(torch, point)
    if spec["candidate"] == "swr":
        catalog = swr_runtime.open_catalog(spec["catalog"])
        call = swr_runtime.attention_call(catalog, spec["gpu"], point)(q, k, v)
    else:
        bench = AttentionBench(torch, flush=None, timing=None)
        backend = bench.backends[spec["candidate"]]
        call = lambda: bench.sdpa(backend, q, k, v, point.causal, point.grouped())
    call()  # warm-up, not profiled
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    call()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_arguments(argv)
    if args.ncu_child:
        return ncu_child(args.ncu_child)
    points = selected_points(args)
    catalog = swr_runtime.open_catalog(args.catalog)
    entries = plan_points(points, catalog, args.gpu)
    if args.dry_run:
        print_plan(entries, planned_peers)
        return 0
    os.makedirs(args.out, exist_ok=True)
    measure(args, argv, entries, catalog)
    return 0


def measure(args, argv, entries, catalog):
    timing = METHOD.format(order="rotating", target_s=args.target_seconds,
                           min_reps=args.min_rounds, max_reps=args.max_rounds)
    document = {
        "schema": "swr-peer-grid/1",
        "record": dict(run_record.command_record(os.path.relpath(__file__, REPOSITORY), argv),
                       **run_record.swr_source(REPOSITORY, args.swr_tune)),
        "method": {"timing": timing, "flops": "attention 4*B*H*S^2*D (halved for causal), GEMM "
                                              "2*M*N*K; TFLOP/s from the median",
                   "swr": "the runtime's choice from the catalog (exact, else nearest tuned "
                          "shape; none: not run), called through swr.torch (fallback='error') over "
                          "libswr_runtime.so, timed "
                          "interleaved with the peers on the same inputs",
                   "l2_misses": "swr: the tuner's CUPTI count from the catalog, for shapes tuned "
                                "exactly; peers: ncu on the --with-ncu subset only",
                   "regimes": grid_points.REGIME_TITLES, "gpu": args.gpu},
    }
    run_grid(args, entries, document, catalog)
    document["record"]["finished_at"] = run_record.utc_now()
    write_results(args, document, entries)
    text = (ratio_table.point_table(entries) + "\n\n" +
            ratio_table.summary_table(entries, grid_points.REGIME_TITLES) + "\n")
    with open(os.path.join(args.out, "table.txt"), "w") as f:
        f.write(text)
    print("\n" + text)


if __name__ == "__main__":
    sys.exit(main())
