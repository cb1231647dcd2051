#!/usr/bin/env python3
"""Summary of one issue-13 ragged GEMM device call (bench/gemm_ragged_device_run.sh), its table last.

Usage: gemm_ragged_summary.py WORK_DIR   (the call's $OUT/work: gpu.txt, steps.txt, tests/, san/,
tune/, h2h-input.txt, h2h.log, ncu/). Reads what the steps wrote; a missing file is reported as
missing, never filled in.
"""
import csv
import glob
import io
import os
import re
import sys

KEY_TILE = re.compile(r"^wgmma-m(\d+)n(\d+)k\d+s\d+-\w+-c(\d)x(\d)-")


def read(path):
    return open(path).read() if os.path.exists(path) else ""


def correctness(work):
    print("\n== correctness (gemm_kernel_gpu_test, odd sizes, 5 rasters x 2 grids) and sanitizers")
    for path in sorted(glob.glob(os.path.join(work, "tests", "*.log"))):
        text = read(path)
        verdict = "PASS" if "[  PASSED  ] 1 test" in text else "FAIL"
        if "[  SKIPPED ]" in text:
            verdict = "SKIP"
        runs = re.search(r"(\d+) runs checked, (\d+) registers", text)
        detail = runs.group(0) if runs else ""
        if verdict != "PASS":
            failure = re.search(r"(relative error.*|Failure.*|Skipped.*|error.*)", text)
            detail = (failure.group(0) if failure else text.strip()[-160:])[:160]
            detail = detail.replace("\n", " | ")
        print(f"{verdict} {os.path.basename(path)[:-4]} {detail}")
    for path in sorted(glob.glob(os.path.join(work, "san", "*.log"))):
        text = read(path)
        summary = re.findall(r"(RACECHECK SUMMARY: .*|ERROR SUMMARY: .*)", text)
        print(f"{os.path.basename(path)[:-4]}: {'; '.join(summary) or 'no summary'}"
              f" {'PASSED' if '[  PASSED  ]' in text else 'NOT PASSED'}")


def ranked(show_text):
    """(key, ratio to cuBLAS) of every measured variant, best first, from `swr-tune show`."""
    rows = []
    for line in show_text.splitlines():
        m = re.match(r"\s*\d+\s+(wgmma-\S+|m\d+\S+)\s+[\d.]+\s+[\d.]+\s+([\d.]+)", line)
        if m:
            rows.append((m.group(1), float(m.group(2))))
    return rows


def is_whole(key):
    m = KEY_TILE.match(key)
    return m is not None and int(m.group(2)) % 64 == 0


def tunes(work):
    print("\n== tunes: the chosen variant (swr-tune query), the best of each width kind (tuner ratios)")
    for path in sorted(glob.glob(os.path.join(work, "tune", "*.log"))):
        tag = os.path.basename(path)[:-4]
        text = read(path)
        measured = re.search(r"measured (\d+) of (\d+) variants.*?\((\d+) failed\)", text)
        query = re.search(r"variant\s+(\S+)", read(path[:-4] + ".query"))
        rows = ranked(read(path[:-4] + ".show"))
        ratio = dict(rows)
        key = query.group(1) if query else None
        plain = [r for r in rows if "-transposed-" not in r[0]]
        whole = next((r for r in plain if is_whole(r[0])), None)
        part = next((r for r in plain if r[0].startswith("wgmma-") and not is_whole(r[0])), None)
        transposed = next((r for r in rows if "-transposed-" in r[0]), None)
        print(f"{tag}: {measured.group(0) if measured else 'no summary'}; chosen {key or '-'}"
              f" ({ratio.get(key, '?')}x)")
        if whole:
            print(f"    best width a multiple of 64: {whole[0]} ({whole[1]}x)")
        if part:
            print(f"    best width 144..240 (not 64k): {part[0]} ({part[1]}x)")
        if transposed:
            print(f"    best transposed (C^T = B^T A^T): {transposed[0]} ({transposed[1]}x)")


def head_to_head(work):
    print("\n== head to head (medians of 40, each launch from a flushed L2, in turn with cuBLAS)")
    text = read(os.path.join(work, "h2h.log"))
    ratios = {}  # (problem, key) -> list of ratios (a key may run in two entries)
    speedups = {}  # (problem, key, baseline) -> speedup
    for line in text.splitlines():
        m = re.match(r"(\S+) head to head, .*cuBLAS ([\d.]+) TFLOP/s, (\S+) ([\d.]+) TFLOP/s"
                     r" .*= ([\d.]+)x", line)
        if m:
            ratios.setdefault((m.group(1), m.group(3)), []).append(float(m.group(5)))
            print(f"{m.group(1):24s} {m.group(3):58s} {m.group(5)}x cuBLAS"
                  f" ({m.group(4)} vs {m.group(2)} TFLOP/s)")
        m = re.match(r"(\S+) (\S+) over (\S+), in turn with cuBLAS: ([\d.]+)x speedup", line)
        if m:
            speedups[(m.group(1), m.group(2), m.group(3))] = float(m.group(4))
            print(f"{m.group(1):24s}   {m.group(2)} over {m.group(3)}: {m.group(4)}x")
        if "co-resident" in line or "Failure" in line or "relative error" in line:
            print("  " + line)
    if not text:
        print("no head-to-head log")
    return ratios, speedups


def cublas_tile(name):
    """cuBLAS's nvjet kernel names carry its tile (cuBLAS M x N: our N x M) and cluster."""
    m = re.search(r"_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)_", name)
    return f"tile {m.group(1)}x{m.group(2)} (cuBLAS MxN) k{m.group(3)} s{m.group(4)}," \
           f" cluster {m.group(5)}x{m.group(6)}" if m else "tile unknown"


def ncu(work):
    print("\n== ncu: L2 requests and sectors per 128x256x64 of useful work (M N K / 2^21),"
          " first launch of each kernel, caches flushed, clocks free")
    for path in sorted(glob.glob(os.path.join(work, "ncu", "*.csv"))):
        name = os.path.basename(path)[:-4]
        m_, n_, k_, dtype, key = name.split("_", 4)
        work_units = int(m_) * int(n_) * int(k_) / (128 * 256 * 64)
        raw = read(path)
        lines = [line for line in raw.splitlines() if line.startswith('"')]
        rows = list(csv.reader(io.StringIO("\n".join(lines))))
        header = next((row for row in rows if "Kernel Name" in row), None)
        if header is None:
            tail = raw.strip().splitlines()[-1] if raw.strip() else "empty"
            print(f"{name}: no ncu rows ({tail})")
            continue
        seen = set()
        for row in rows[rows.index(header) + 2:]:
            kernel = row[header.index("Kernel Name")]
            if kernel in seen or len(row) != len(header):
                continue
            seen.add(kernel)
            who = key if kernel.startswith("swr_gemm") else f"cuBLAS {kernel} ({cublas_tile(kernel)})"
            parts = [f"{m_}x{n_}x{k_} {dtype} {who}"]
            for metric in ("lts__t_requests.sum", "lts__t_requests_srcunit_tex.sum",
                           "lts__t_sectors.sum", "lts__t_sectors_srcunit_tex.sum"):
                try:
                    value = float(row[header.index(metric)].replace(",", ""))
                except (ValueError, IndexError):
                    continue
                parts.append(f"{metric.split('__')[1].removesuffix('.sum')} {value / work_units:.0f}")
            try:
                duration = row[header.index("gpu__time_duration.sum")]
                unit = rows[rows.index(header) + 1][header.index("gpu__time_duration.sum")]
                parts.append(f"kernel {duration} {unit}")
            except (ValueError, IndexError):
                pass
            print("; ".join(parts))


def table(work, ratios, speedups):
    print("\n== issue 13 table: tuned best head to head with cuBLAS (>= 0.9x wanted), and against"
          " the baseline of the same run")
    entries = [line.split(",") for line in read(os.path.join(work, "h2h-input.txt")).split()]
    print(f"{'shape':16s} {'dtype':5s} {'tuned best':56s} {'x cuBLAS':>8s}  "
          f"{'baseline':56s} {'x cuBLAS':>8s} {'speedup':>7s}")
    for fields in entries:
        if len(fields) < 5:
            continue
        m_, n_, k_, dtype, key = fields[:5]
        problem = f"m{m_}_n{n_}_k{k_}_{dtype}"
        base = fields[5] if len(fields) > 5 else ""
        # Entries ran in this order, each printing its keys' ratios in turn: take them in order.
        r = ratios.get((problem, key), [])
        r = r.pop(0) if r else None
        rb = ratios.get((problem, base), []) if base else []
        rb = rb.pop(0) if rb else None
        s = speedups.get((problem, key, base))
        shape = f"{m_}x{n_}x{k_}"
        print(f"{shape:16s} {dtype:5s} {key:56s} {(f'{r:.3f}' if r else '-'):>8s}  "
              f"{base or '-':56s} {(f'{rb:.3f}' if rb else '-'):>8s} "
              f"{(f'{s:.3f}x' if s else '-'):>7s}")


def main():
    work = sys.argv[1]
    print(read(os.path.join(work, "gpu.txt")).strip())
    print("\n== steps (rc, seconds)")
    print(read(os.path.join(work, "steps.txt")).strip())
    correctness(work)
    tunes(work)
    ratios, speedups = head_to_head(work)
    ncu(work)
    table(work, ratios, speedups)


if __name__ == "__main__":
    main()
