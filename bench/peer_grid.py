#!/usr/bin/env python3
"""swr against its peers over a grid of shapes, in one run: for every point the best swr variant
(from a results database, or the nearest tuned shape's, or a default config; each point says
which) and every peer, on the same inputs, interleaved, with one timing method (device_timing.py).

Peers: PyTorch SDPA's FLASH_ATTENTION (FlashAttention-2), CUDNN_ATTENTION, EFFICIENT_ATTENTION and
the unfused MATH path for attention; cuBLAS (torch.matmul) for GEMM. A peer this PyTorch lacks or
that refuses a shape is reported as such, never a failure of the run. Grid: grid_points.py.

L2 misses: swr's come from the database (the tuner's CUPTI counters) for points tuned at exactly
that shape; the peers' only with --with-ncu, for a few points (ncu_misses.py), else they are left
out.

Output in --out: results.json (every point and candidate, the versions and the command:
run_record.py), results.csv (one row per point and candidate), table.txt (what is printed).
`swr-tune report --bench results.json` draws it.

On the GPU machine, from the repository root, after building swr-tune:
    python3 bench/peer_grid.py --gpu h200 --show-json bench/results/l2-sweep-h200/measured_*.json \\
        --out /tmp/peer-grid
    python3 bench/peer_grid.py --gpu h200 --db results.db --out /tmp/peer-grid --quick
    python3 bench/peer_grid.py --dry-run ...    (the plan only: no GPU, no PyTorch)
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time

import grid_points
import ncu_misses
import ratio_table
import run_record
import swr_choice
from device_timing import METHOD
from swr_kernels import CompileRequest, compile_all, compile_split

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNSUPPORTED_NOTE = "swr has attention kernels for head dim 64 and 128 only"


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", default="h200", help="swr GPU profile to compile for (h200)")
    parser.add_argument("--swr-tune", default="build/swr-tune", help="path to swr-tune")
    parser.add_argument("--db", help="results database: best variant per tuned shape")
    parser.add_argument("--show-json", nargs="+", default=[], metavar="FILE",
                        help="`swr-tune show --json` dumps to take the tuned shapes from")
    parser.add_argument("--export", metavar="DIR",
                        help="an export directory (swr-tune export): tuned shapes and their cubins")
    parser.add_argument("--regimes", nargs="+", default=["short", "long", "gemm"],
                        choices=["short", "long", "gemm"])
    parser.add_argument("--quick", action="store_true", help="a few points of each regime")
    parser.add_argument("--out", help="directory for results.json, results.csv, table.txt")
    parser.add_argument("--target-seconds", type=float, default=0.3,
                        help="timed seconds per candidate and point, within the rounds' bounds")
    parser.add_argument("--min-rounds", type=int, default=3)
    parser.add_argument("--max-rounds", type=int, default=20)
    parser.add_argument("--time-budget", type=float, default=0,
                        help="seconds after which no new point starts (0: none); the rest are "
                             "recorded as skipped")
    parser.add_argument("--jobs", type=int, default=16, help="parallel NVRTC compiles")
    parser.add_argument("--gemm-kernels", nargs="+", default=[], metavar="DIR",
                        help="kernel directories (swr-tune compile --out) of swr GEMM kernels")
    parser.add_argument("--with-ncu", action="store_true",
                        help="also count L2 misses of every candidate with ncu, for a few points")
    parser.add_argument("--ncu-keys", nargs="+", default=list(ncu_misses.DEFAULT_KEYS),
                        metavar="KEY", help="problem keys of the --with-ncu points")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan (points, swr configs, compile commands) and stop")
    parser.add_argument("--ncu-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.ncu_child and not args.dry_run and not args.out:
        parser.error("--out is required")
    return args


def read_export(args):
    """(tuned shapes, cubins) of --export DIR, or empty ones."""
    if not args.export:
        return [], {}
    with open(os.path.join(args.export, "manifest.json")) as f:
        manifest = json.load(f)
    return (swr_choice.tuned_shapes_from_export(manifest, args.gpu),
            swr_choice.exported_cubins(manifest, os.path.abspath(args.export)))


def tuned_shapes(args):
    documents = []
    if args.db:
        shown = subprocess.run([args.swr_tune, "show", "--json", "--db", args.db, "--gpu", args.gpu],
                               capture_output=True, text=True)
        if shown.returncode != 0:
            sys.exit(f"peer_grid: {args.swr_tune} show failed: {shown.stderr.strip()}")
        documents.append(json.loads(shown.stdout))
    for path in args.show_json:
        with open(path) as f:
            documents.append(json.load(f))
    return [s for d in documents for s in swr_choice.tuned_shapes_from_show_json(d, args.gpu)]


def plan_points(points, tuned, work_directory, exported=()):
    """Each point's json entry (with its swr choice) and the compile requests they need (none for
    a kernel in `exported`)."""
    entries, requests, compiled_by = [], {}, {}
    for point in points:
        entry = dict(point.as_json(), describe=point.describe(), candidates={})
        entries.append(entry)
        if point.family != "attention":
            continue
        if not point.swr_supported():
            entry.update(swr_config=None, swr_config_source="unsupported", swr_note=UNSUPPORTED_NOTE)
            continue
        choice = swr_choice.choose_config(point, tuned)
        entry.update(swr_config=choice.config_key, swr_config_source=choice.source,
                     swr_note=choice.note)
        if choice.source == "tuned":
            entry["swr_tuned"] = {"l2_sector_misses": choice.tuned.l2_sector_misses,
                                  "l2_hit_rate": choice.tuned.l2_hit_rate,
                                  "dram_bytes": choice.tuned.dram_bytes,
                                  "tuner_median_ms": choice.tuned.median_ms}
        kernel_id = point.compiled_part() + (choice.config_key,)
        if kernel_id in compiled_by or kernel_id in exported:
            continue
        # Compile for a shape whose space holds the config: where it was tuned, else this one.
        source = choice.tuned
        shape = ((source.batch, source.heads, source.seq_q) if source else
                 (point.batch, point.heads, point.seq)) + point.compiled_part()
        if shape not in requests:
            name = "b{}_h{}_s{}_d{}_{}_{}".format(*shape[:5], "causal" if shape[5] else "noncausal")
            requests[shape] = CompileRequest(shape, os.path.join(work_directory, name))
        requests[shape].keys.add(choice.config_key)
        compiled_by[kernel_id] = shape
    return entries, list(requests.values())


def print_plan(entries, requests, args):
    for e in entries:
        if e["family"] == "attention":
            print(f"{e['describe']}: swr {e.get('swr_config') or '-'} ({e['swr_note']})")
        else:
            print(f"{e['describe']}: cuBLAS" + (" and swr GEMM kernels" if args.gemm_kernels else ""))
    parallel, jobs_each = compile_split(requests, args.jobs)
    print(f"\n{len(entries)} points; swr-tune compile runs ({parallel} at once):")
    for request in requests:
        print("  " + " ".join(request.command(args.swr_tune, args.gpu, jobs_each)))


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


def run_grid(args, entries, requests, document, exported):
    import torch

    from attention_peers import AttentionBench
    from device_timing import L2Flush
    from gemm_peers import GemmBench, load_gemm_manifests
    from swr_kernels import Driver, SwrVariant

    torch.manual_seed(int(time.time()))
    properties = torch.cuda.get_device_properties(0)
    driver = Driver()
    torch.zeros(1, device="cuda")  # PyTorch's primary context is current from here on
    document["record"].update(run_record.software_record(torch))
    version = ctypes.c_int()
    if driver.lib.cuDriverGetVersion(ctypes.byref(version)) == 0:
        document["record"]["cuda_driver_api"] = f"{version.value // 1000}.{version.value % 1000 // 10}"
    print(f"# {properties.name}, {properties.multi_processor_count} SMs, torch {torch.__version__}, "
          f"cuDNN {document['record']['cudnn']}, driver {document['record']['driver']}", flush=True)

    started = time.time()
    kernels = dict(exported)
    kernels.update(compile_all(args.swr_tune, args.gpu, requests, jobs=args.jobs))
    document["record"]["compile_seconds"] = round(time.time() - started, 1)
    print(f"# compiled {len(kernels)} swr kernels in {time.time() - started:.0f} s", flush=True)

    flush = L2Flush(torch, properties.L2_cache_size)
    timing = {"target_s": args.target_seconds, "min_reps": args.min_rounds,
              "max_reps": args.max_rounds}
    attention = AttentionBench(torch, flush, timing)
    gemm = GemmBench(torch, driver, flush, timing, load_gemm_manifests(args.gemm_kernels),
                     properties.multi_processor_count)
    loaded = {}

    def swr_for(entry):
        if entry["swr_config_source"] == "unsupported":
            return {"status": "unsupported", "note": UNSUPPORTED_NOTE}
        kernel_id = (entry["head_dim"], entry["dtype"], entry["causal"], entry["swr_config"])
        if kernel_id not in loaded:
            found = kernels.get(kernel_id, "not compiled")
            if isinstance(found, str):
                loaded[kernel_id] = {"status": "failed", "note": found}
            else:
                directory, entry_name, kernel = found
                loaded[kernel_id] = {"variant": SwrVariant(driver, directory, entry_name, kernel,
                                                           properties.multi_processor_count)}
        return loaded[kernel_id]

    points = {p.key(): p for p in grid_points.full_grid(args.regimes, args.quick)}
    peers = list(ratio_table.PEER_ORDER)
    for index, entry in enumerate(entries):
        point = points[entry["key"]]
        if args.time_budget and time.time() - started > args.time_budget:
            entry["candidates"] = {"swr": {"status": "skipped", "note": "time budget spent"}}
            continue
        if point.family == "attention":
            entry["candidates"] = attention.run(point, swr_for(entry))
            swr = entry["candidates"]["swr"]
            swr["config"] = entry.get("swr_config")
            if "swr_tuned" in entry and entry["swr_tuned"]["l2_sector_misses"] is not None:
                swr["l2_sector_misses"] = entry["swr_tuned"]["l2_sector_misses"]
                swr["l2_source"] = "tuner (CUPTI), results database"
        else:
            entry["candidates"] = gemm.run(point)
        print(f"[{index + 1}/{len(entries)} {time.time() - started:.0f}s] "
              + point_line(entry, peers), flush=True)
        write_results(args, document, entries)  # a killed run keeps what it measured
    document["record"]["grid_seconds"] = round(time.time() - started, 1)
    if args.with_ncu:
        add_ncu_misses(args, entries, points, kernels)


def add_ncu_misses(args, entries, points, kernels):
    ncu = ncu_misses.find_ncu()
    if ncu is None:
        print("# --with-ncu: ncu not found; peers' L2 misses are left out", flush=True)
        return
    with tempfile.TemporaryDirectory() as directory:
        for entry in entries:
            if entry["key"] not in args.ncu_keys:
                continue
            for name, candidate in entry["candidates"].items():
                if not ratio_table.ok(candidate):
                    continue
                spec = {"point": points[entry["key"]].as_json(), "candidate": name}
                if name == "swr":
                    found = kernels[(entry["head_dim"], entry["dtype"], entry["causal"],
                                     entry["swr_config"])]
                    spec["swr_kernel"] = list(found)
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
    from swr_kernels import Driver, SwrVariant

    with open(spec_path) as f:
        spec = json.load(f)
    fields = {k: spec["point"][k] for k in ("regime", "batch", "heads", "seq", "head_dim",
                                            "dtype", "causal")}
    point = grid_points.AttentionPoint(**fields)
    dtype = torch.float16 if point.dtype == "f16" else torch.bfloat16
    q = torch.randn(point.batch, point.heads, point.seq, point.head_dim, device="cuda", dtype=dtype)
    k, v = torch.randn_like(q), torch.randn_like(q)
    if spec["candidate"] == "swr":
        directory, entry, kernel = spec["swr_kernel"]
        variant = SwrVariant(Driver(), directory, entry, kernel,
                             torch.cuda.get_device_properties(0).multi_processor_count)
        out, counter = torch.empty_like(q), torch.zeros(1, dtype=torch.int32, device="cuda")
        call = lambda: variant.run(q, k, v, out, counter, point.causal)
    else:
        bench = AttentionBench(torch, flush=None, timing=None)
        backend = bench.backends[spec["candidate"]]
        call = lambda: bench.sdpa(backend, q, k, v, point.causal)
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
    points = grid_points.full_grid(args.regimes, args.quick)
    exported_shapes, exported = read_export(args)
    tuned = tuned_shapes(args) + exported_shapes
    if args.dry_run:
        print_plan(*plan_points(points, tuned, "WORK", exported), args)
        return 0
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="swr-peer-grid-") as work_directory:
        entries, requests = plan_points(points, tuned, work_directory, exported)
        measure(args, argv, entries, requests, exported, len(tuned))
    return 0


def measure(args, argv, entries, requests, exported, tuned_count):
    timing = METHOD.format(target_s=args.target_seconds, min_reps=args.min_rounds,
                           max_reps=args.max_rounds)
    document = {
        "schema": "swr-peer-grid/1",
        "record": dict(run_record.command_record(os.path.relpath(__file__, REPOSITORY), argv),
                       **run_record.swr_source(REPOSITORY, args.swr_tune)),
        "method": {"timing": timing, "flops": "attention 4*B*H*S^2*D (halved for causal), GEMM "
                                              "2*M*N*K; TFLOP/s from the median",
                   "l2_misses": "swr: the tuner's CUPTI count from the database, for shapes tuned "
                                "exactly; peers: ncu on the --with-ncu subset only",
                   "tuned_shapes": tuned_count, "regimes": grid_points.REGIME_TITLES,
                   "gpu_profile": args.gpu},
    }
    run_grid(args, entries, requests, document, exported)
    document["record"]["finished_at"] = run_record.utc_now()
    write_results(args, document, entries)
    text = (ratio_table.point_table(entries) + "\n\n" +
            ratio_table.summary_table(entries, grid_points.REGIME_TITLES) + "\n")
    with open(os.path.join(args.out, "table.txt"), "w") as f:
        f.write(text)
    print("\n" + text)


if __name__ == "__main__":
    sys.exit(main())
