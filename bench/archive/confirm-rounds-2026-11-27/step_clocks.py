"""The SM clock and power during each candidate's timed training steps: the nvidia-smi samples
(`bench/backward_peers_device_run.sh peers` logs them every 100 ms to clocks.csv) that fall inside a
step, from its host start (the run log's `at`) for its device time. Mcycles: median ms x mean MHz,
the step's length in clock cycles.

    python3 bench/archive/confirm-rounds-2026-11-27/step_clocks.py training_step-balanced.json.xz clocks.csv.xz
"""
import bisect
import datetime
import json
import lzma
import statistics
import sys


def samples(path):
    """[(epoch seconds, SM MHz, watts)] of nvidia-smi's csv (its timestamps are UTC here)."""
    found = []
    for line in lzma.open(path, "rt"):
        fields = [field.strip() for field in line.split(",")]
        try:
            at = datetime.datetime.strptime(fields[0], "%Y/%m/%d %H:%M:%S.%f")
        except ValueError:
            continue
        found.append((at.replace(tzinfo=datetime.timezone.utc).timestamp(),
                      float(fields[1].split()[0]), float(fields[2].split()[0])))
    return sorted(found)


def main(results_path, clocks_path):
    results = json.load(lzma.open(results_path))
    log = samples(clocks_path)
    times = [sample[0] for sample in log]
    print(f"{'point':28s} {'candidate':9s} {'ms':>8s} {'MHz':>6s} {'W':>6s} {'n':>4s} {'Mcycles':>8s}")
    for point in results["points"]:
        seen = {}
        for run in point["runs"]:
            if not run["name"].endswith(" fwd+bwd"):
                continue
            entry = seen.setdefault(run["name"].split()[0], {"ms": [], "mhz": [], "w": []})
            entry["ms"].append(run["ms"])
            first = bisect.bisect_left(times, run["at"])
            last = bisect.bisect_right(times, run["at"] + run["ms"] / 1000)
            for _, mhz, watts in log[first:last]:
                entry["mhz"].append(mhz)
                entry["w"].append(watts)
        for name in ("swr", "fa4", "cudnn"):
            entry = seen.get(name)
            if not entry:
                continue
            ms = statistics.median(entry["ms"])
            if not entry["mhz"]:
                print(f"{point['point']:28s} {name:9s} {ms:8.3f}  (no sample inside its steps)")
                continue
            mhz = statistics.mean(entry["mhz"])
            print(f"{point['point']:28s} {name:9s} {ms:8.3f} {mhz:6.0f} "
                  f"{statistics.mean(entry['w']):6.0f} {len(entry['mhz']):4d} {ms * mhz / 1000:8.2f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
