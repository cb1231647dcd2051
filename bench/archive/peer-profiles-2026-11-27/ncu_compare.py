#!/usr/bin/env python3
"""Two Nsight Compute exports of kernels side by side (swr's and a peer's), as the results of
bench/results/attention-backward-ws-h200/peer-profiles-2026-11-27/ were made:

    details A.csv[.xz] B.csv[.xz] ID_A ID_B    every metric of `ncu --page details --csv` whose
                                               value differs, kernel ID_A of A against ID_B of B
    mix A-sass.csv.xz B-sass.csv.xz NAME_A NAME_B
                                               executed instructions and warp-stall samples per
                                               opcode (`ncu --page source --csv --print-source
                                               sass`), of the kernel whose name holds NAME_A / NAME_B
    sites SASS.csv.xz NAME [MIN_EXECUTED]      the waits, barriers and wgmma of a kernel in program
                                               order, with their executions and stall samples
"""
import collections
import csv
import lzma
import re
import sys


def open_text(path):
    return lzma.open(path, "rt") if path.endswith(".xz") else open(path)


def details(path):
    """{kernel ID: {(section, metric): (value, unit)}}."""
    kernels = collections.OrderedDict()
    for row in csv.DictReader(open_text(path)):
        kernels.setdefault(row["ID"], {})[(row["Section Name"], row["Metric Name"])] = (
            row["Metric Value"], row["Metric Unit"])
    return kernels


def sass_rows(path, name_part):
    """The source page's rows of the first kernel whose name holds name_part."""
    name, header, rows = None, None, []
    for row in csv.reader(open_text(path)):
        if not row:
            continue
        if row[0] == "Kernel Name":
            if rows:
                break
            name = row[1] if name_part in row[1] else None
            continue
        if row[0] == "Address":
            header = row
            continue
        if name is not None:
            rows.append(dict(zip(header, row)))
    return rows


def opcode(source):
    return re.sub(r"^@!?U?P\w+\s+", "", source.strip()).split(" ")[0]


def main(argv):
    if argv[0] == "details":
        a, b = details(argv[1])[argv[3]], details(argv[2])[argv[4]]
        for key, (value, unit) in a.items():
            other = b.get(key, ("-", ""))[0]
            if value != other and not key[0].startswith("PM") and "Tables" not in key[0]:
                print(f"{key[0][:34]:34s} {key[1][:44]:44s} {value:>16s} {other:>16s} {unit}")
    elif argv[0] == "mix":
        counts = []
        for path, part in ((argv[1], argv[3]), (argv[2], argv[4])):
            executed, stalls = collections.Counter(), collections.Counter()
            for row in sass_rows(path, part):
                op = opcode(row["Source"])
                executed[op] += int(row["Instructions Executed"] or 0)
                stalls[op] += int(row["Warp Stall Sampling (All Samples)"] or 0)
            counts.append((executed, stalls))
        (ea, sa), (eb, sb) = counts
        print(f"{'all':34s} {sum(ea.values()):14d} {sum(eb.values()):14d} "
              f"{sum(sa.values()):9d} {sum(sb.values()):9d}")
        for op in sorted(set(ea) | set(eb), key=lambda k: -(ea[k] + eb[k]))[:48]:
            print(f"{op:34s} {ea[op]:14d} {eb[op]:14d} {sa[op]:9d} {sb[op]:9d}")
    elif argv[0] == "sites":
        least = int(argv[3]) if len(argv) > 3 else 200000
        for index, row in enumerate(sass_rows(argv[1], argv[2])):
            executed = int(row["Instructions Executed"] or 0)
            source = row["Source"].strip()
            if executed >= least and re.search(
                    r"HGMMA|DEPBAR|BAR\.|TRYWAIT|NANOSLEEP|UCGABAR|UBLKRED|UTMALDG", source):
                print(f"{index:5d} {executed:11d} {row['Warp Stall Sampling (All Samples)']:>7s}  "
                      f"{source[:90]}")
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
