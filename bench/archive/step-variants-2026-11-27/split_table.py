"""Each point of a split training-step run (bench/backward_peers_device_run.sh split peers): swr
over the faster of FA4 and cuDNN, swr's forward and backward alone over FA4's, the tuner's times of
the variants the step ran, and the variants.

    python3 split_table.py gpu*/training_step-balanced.json.xz
"""
import json
import lzma
import sys

for path in sys.argv[1:]:
    for point in json.load(lzma.open(path))["points"]:
        c = point["candidates"]
        swr, fa4, explain = c["swr"], c["fa4"], point["swr_explain"]
        print(f"{point['point']:27s} step {point['swr_vs_faster_of_fa4_cudnn']:.4f} "
              f"fwd/fa4 {swr['fwd_ms'] / fa4['fwd_ms']:.3f} bwd/fa4 {swr['bwd_ms'] / fa4['bwd_ms']:.3f}"
              f" | tuner ms fwd {explain['measured']['median_ms']:.3f} bwd "
              f"{explain['backward']['measured']['median_ms']:.3f} | {explain['variant']} | "
              f"{explain['backward']['variant']}")
