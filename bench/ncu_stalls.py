"""Where two kernels' warps wait, side by side, from Nsight Compute source pages.

Each input is a kernel's source page as CSV (`ncu --import REPORT --page source --csv
--print-source sass`, optionally xz-compressed): one row per SASS instruction with its stall
samples by reason (those the page has no column for as `unlisted`). Printed: each reason's
samples in all and per millisecond of the kernel (the samples grow with its duration), then, for
the reasons named by --reasons, the opcodes that collect most of them. Samples count every warp
of the kernel, the producer's too. With --sequence N: the wgmma, waits and barriers of each
kernel's loop (executed N times or more) in program order, each with its samples, the
instructions between them counted, and the loop's instructions a step.

    python3 bench/ncu_stalls.py swr=swr-d64c-source.csv.xz:5.16 fa4=fa4-d64c-source.csv.xz:4.54
"""
import argparse
import collections
import csv
import lzma
import os
import sys


def read_rows(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as text:
        lines = text.read().splitlines()
    # The page opens with a "Kernel Name" line before the header.
    start = next(i for i, line in enumerate(lines) if line.startswith('"Address"'))
    return list(csv.DictReader(lines[start:]))


def number(text):
    return float(text.replace(",", "") or 0)


def opcode(source):
    words = source.split()
    if words and words[0].startswith("@"):  # a predicate guard
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def stalls(rows):
    """{reason: samples} over every instruction, and {reason: {opcode: samples}}."""
    totals = collections.Counter()
    by_opcode = collections.defaultdict(collections.Counter)
    for row in rows:
        op = opcode(row["Source"])
        listed = 0.0
        for key, value in row.items():
            if key.startswith("stall_") and "Not Issued" not in key:
                samples = number(value)
                listed += samples
                totals[key[6:]] += samples
                by_opcode[key[6:]][op] += samples
        # The page has no column for some reasons (samples at HGMMA instructions, on the H200):
        # what the row's own count holds beyond its columns.
        unlisted = number(row["Warp Stall Sampling (All Samples)"]) - listed
        if unlisted > 0:
            totals["unlisted"] += unlisted
            by_opcode["unlisted"][op] += unlisted
    return totals, by_opcode


SYNCHRONIZING = ("HGMMA", "WARPGROUP", "BAR", "SYNCS")


def sequence(rows, executions):
    """The loop (instructions executed at least `executions` times) in program order: each
    synchronizing instruction with its samples, the instructions between two of them as one line
    (how many, their samples), then the loop's samples and its instructions a step (executions
    over those of a wgmma): where a step's warps wait, one wait point after another, and what
    the stretches between cost."""
    loop = [row for row in rows if number(row["Instructions Executed"]) >= executions]
    lines, between, between_samples = [], 0, 0.0

    def close_stretch():
        if between:
            lines.append(f"{between_samples:8.0f}  ({between} other instructions)")

    for row in loop:
        samples = number(row["Warp Stall Sampling (All Samples)"])
        if opcode(row["Source"]) in SYNCHRONIZING:
            close_stretch()
            lines.append(f"{samples:8.0f}  {row['Source'].strip()}")
            between, between_samples = 0, 0.0
        else:
            between += 1
            between_samples += samples
    close_stretch()
    # A step issues each of its wgmma once (a spinning wait runs more often).
    issued = collections.Counter(number(row["Instructions Executed"]) for row in loop
                                 if opcode(row["Source"]) == "HGMMA")
    steps = issued.most_common(1)[0][0] if issued else 0
    if steps:
        executed = sum(number(row["Instructions Executed"]) for row in loop)
        total = sum(number(row["Warp Stall Sampling (All Samples)"]) for row in loop)
        lines.append(f"{total:8.0f}  in all: {executed / steps:.0f} instructions a step")
    return lines


def parse_kernel(text):
    name, _, rest = text.partition("=")
    path, _, ms = rest.rpartition(":")
    try:
        duration = float(ms)
    except ValueError:
        duration = 0.0
    if not name or not path or duration <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=CSV:MILLISECONDS (> 0)")
    if not os.path.isfile(path):
        raise argparse.ArgumentTypeError(f"{text!r}: no file {path}")
    return name, path, duration


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernels", nargs="+", type=parse_kernel, metavar="NAME=CSV:MS",
                        help="a kernel's source page and its duration in ms")
    parser.add_argument("--reasons", nargs="*",
                        default=["barrier", "wait", "long_sb", "unlisted"],
                        help="reasons whose opcodes are listed (default: %(default)s)")
    parser.add_argument("--top", type=int, default=5, help="opcodes listed per reason")
    parser.add_argument("--sequence", type=float, metavar="EXECUTIONS",
                        help="instead: each kernel's wgmma, wgmma waits, barriers and mbarrier "
                             "operations executed at least EXECUTIONS times (its loop's), in "
                             "program order with their samples")
    args = parser.parse_args(argv)
    if args.sequence is not None:
        for name, path, _ in args.kernels:
            print(f"{name}:")
            for line in sequence(read_rows(path), args.sequence):
                print("  " + line)
        return 0

    kernels = [(name, ms, *stalls(read_rows(path))) for name, path, ms in args.kernels]
    reasons = sorted({r for _, _, totals, _ in kernels for r in totals},
                     key=lambda r: -kernels[0][2][r])
    print("| reason | " + " | ".join(f"{name} samples | {name} per ms" for name, *_ in kernels) +
          " |")
    print("|---|" + "---|---|" * len(kernels))
    for reason in reasons + ["all"]:
        cells = []
        for _, ms, totals, _ in kernels:
            samples = sum(totals.values()) if reason == "all" else totals[reason]
            cells += [f"{samples:.0f}", f"{samples / ms:.0f}"]
        if reason == "all" or any(kernel[2][reason] for kernel in kernels):
            print(f"| {reason} | " + " | ".join(cells) + " |")
    for reason in args.reasons:
        print(f"\n{reason}:")
        for name, _, _, by_opcode in kernels:
            top = by_opcode[reason].most_common(args.top)
            print(f"  {name}: " + ", ".join(f"{op} {samples:.0f}" for op, samples in top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
