"""L2 misses of the peers, for a few points only (--with-ncu): the tuner counts swr's misses itself
(CUPTI, stored in the database), but PyTorch's kernels can only be counted from outside, by Nsight
Compute, at a few seconds per candidate, too slow for the whole grid.

Each (point, candidate) runs in a child process of this script under
    ncu --profile-from-start off --cache-control all --metrics <misses> --csv --page raw
and the child brackets the one measured call with cudaProfilerStart/Stop, so only that call's
kernels are counted (all of them: the math path launches several), from a flushed L2 as in the
tuner. The metric is the tuner's: lts__t_sectors_srcunit_tex_lookup_miss.sum.
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys

MISS_METRIC = "lts__t_sectors_srcunit_tex_lookup_miss.sum"
# Default subset: one short and two long fp16 points, D=128, non-causal.
DEFAULT_KEYS = ("b4_h16_sq4096_skv4096_d128_f16_noncausal",
                "b8_h1_sq16384_skv16384_d128_f16_noncausal",
                "b8_h1_sq65536_skv65536_d128_f16_noncausal")


def find_ncu():
    return shutil.which("ncu") or next(
        (p for p in ("/usr/local/cuda/bin/ncu",) if os.path.exists(p)), None)


def sum_metric(csv_text, metric=MISS_METRIC):
    """Sum of `metric` over the kernel rows of ncu's raw CSV page (None when there is none)."""
    lines = [line for line in csv_text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header = next((row for row in rows if metric in row and "Kernel Name" in row), None)
    if header is None:
        return None
    column = header.index(metric)
    total, kernels = 0.0, 0
    for row in rows[rows.index(header) + 1:]:
        try:
            total += float(row[column].replace(",", ""))
            kernels += 1
        except (ValueError, IndexError):
            continue  # the units row
    return total if kernels else None


def count_misses(ncu, script, spec, work_directory, timeout_s=300):
    """Runs one child under ncu; returns (misses or None, note)."""
    spec_path = os.path.join(work_directory, f"ncu-{spec['point']['key']}-{spec['candidate']}.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    command = [ncu, "--profile-from-start", "off", "--cache-control", "all", "--clock-control",
               "none", "--metrics", MISS_METRIC, "--csv", "--page", "raw",
               sys.executable, script, "--ncu-child", spec_path]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None, f"ncu timed out after {timeout_s} s"
    misses = sum_metric(done.stdout)
    if misses is None:
        tail = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or ["?"])[-1]
        return None, f"ncu gave no {MISS_METRIC} (exit {done.returncode}): {tail}"
    return misses, "Nsight Compute, L2 flushed before the call"
