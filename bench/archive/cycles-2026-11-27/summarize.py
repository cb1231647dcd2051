"""Per variant, its three rounds of ncu metrics side by side, from the ncu.csv.xz that
bench/archive/cycles-2026-11-27/ncu_rounds.sh wrote (one '### round SHAPE KEY'
line before each ncu --csv block).

    python3 bench/archive/cycles-2026-11-27/summarize.py bench/results/.../cycles-2026-11-27/ncu.csv.xz
"""
import collections
import csv
import io
import lzma
import re
import statistics
import sys

text = lzma.open(sys.argv[1], "rt").read()
rows = collections.defaultdict(list)
for block in re.split(r"^### ", text, flags=re.M)[1:]:
    head, _, body = block.partition("\n")
    key = head.split()[-1]
    head_dim = re.search(r"--head-dim (\d+)", head).group(1)
    metrics = {}
    for row in csv.reader(io.StringIO("\n".join(l for l in body.splitlines() if l.startswith('"')))):
        try:
            metrics[row[-3]] = float(row[-1].replace(",", ""))
        except (ValueError, IndexError):
            pass
    rows[(head_dim, key)].append(metrics)


def column(runs, name, scale):
    return " ".join("%.2f" % (m[name] / scale) if name in m else "-" for m in runs)


print(f"{'D':4} {'variant':55} {'Mcycles, rounds 1-3':21} {'ms':18} {'GHz':15} DRAM GB  L2 hit %")
for (head_dim, key), runs in rows.items():
    dram = [(m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]) / 1e9 for m in runs if m]
    hits = [m["lts__t_sector_hit_rate.pct"] for m in runs if m]
    print(f"{head_dim:4} {key:55} {column(runs, 'gpc__cycles_elapsed.max', 1e6):21} "
          f"{column(runs, 'gpu__time_duration.sum', 1e6):18} "
          f"{column(runs, 'gpc__cycles_elapsed.avg.per_second', 1e9):15} "
          f"{statistics.median(dram):.2f}     {statistics.median(hits):.2f}")
