"""FA4's time over each swr variant's, per point, from step_variants.py's results files (one column
each), beside the tuner's time of the variant.

    python3 summarize.py step-variants-h100-1.json.xz step-variants-h100-2-*.json.xz
"""
import json
import lzma
import os
import sys

runs = [(os.path.basename(path).split(".")[0].removeprefix("step-variants-"), json.load(lzma.open(path))) for path in sys.argv[1:]]
print(f"{'point':26s} {'variant':58s} {'tuner ms':>8s} " +
      " ".join(f"{name:>14s}" for name, _ in runs))
for index, point in enumerate(runs[0][1]["points"]):
    for rank, entry in enumerate(point["swr"]):
        cells = [f"{run['points'][index]['swr'][rank]['fa4_over_swr']:14.3f}" for _, run in runs]
        print(f"{point['point']:26s} {entry['variant']:58s} {entry['tuner_ms']:8.3f} " +
              " ".join(cells))
