#!/usr/bin/env python3
"""The summary table of bench/model_transfer_device_run.sh: per attention shape the variants
measured, the best and its time, the tune's wall time; on the H100 also the --model-top 10 run
(variants, time, its best and how far that is from the full tune's best); per GEMM sweep size the
best stride of each binary.

    python3 bench/model_transfer_summary.py OUT_DIR GPU

OUT_DIR holds steps.txt and results.tar.xz (or results/), as the run left them."""
import json
import pathlib
import re
import sys
import tarfile


def load_results(out):
    results = {}
    archive = out / "results.tar.xz"
    if archive.exists():
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.name.endswith(".json"):
                    results[member.name] = parse(tar.extractfile(member).read())
    else:
        for path in (out / "results").rglob("*.json"):
            results[str(path.relative_to(out))] = parse(path.read_bytes())
    return results


def parse(text):
    """A dump, or None where the run left none (an empty file: the step did not get there)."""
    try:
        return json.loads(text)
    except ValueError:
        return None


def step_seconds(out):
    seconds = {}
    for line in (out / "steps.txt").read_text().splitlines():
        match = re.match(r"(\S+) rc=(-?\d+) (\d+)s", line)
        if match:
            seconds[match.group(1)] = (int(match.group(2)), int(match.group(3)))
    return seconds


def variants(dump):
    if not dump or not dump.get("results"):
        return []
    return [v for v in dump["results"][0]["variants"] if v.get("status") == "ok"]


def main():
    out, gpu = pathlib.Path(sys.argv[1]), sys.argv[2]
    results = load_results(out)
    steps = step_seconds(out)
    print(f"{'shape':<28} {'variants':>8} {'best ms':>9} {'tune s':>7}  best variant")
    for name in sorted(results):
        match = re.search(rf"results/{gpu}/measured_(b\d+_s\d+_d\d+_\w+)\.json$", name)
        if not match:
            continue
        shape = match.group(1)
        measured = variants(results[name])
        if not measured:
            print(f"{shape:<28} {'none':>8}")
            continue
        best = min(measured, key=lambda v: v["median_ms"])
        rc, seconds = steps.get(f"tune_{shape}", (None, 0))
        print(f"{shape:<28} {len(measured):>8} {best['median_ms']:>9.3f} {seconds:>7}  "
              f"{best['config_key']}")
        top = variants(results.get(name.replace(f"/{gpu}/", f"/{gpu}-top10/")))
        if top:
            top_best = min(top, key=lambda v: v["median_ms"])
            _, top_seconds = steps.get(f"top10_{shape}", (None, 0))
            loss = 100 * (top_best["median_ms"] / best["median_ms"] - 1)
            ratio = seconds / top_seconds if top_seconds else float("nan")
            print(f"{'  --model-top 10':<28} {len(top):>8} {top_best['median_ms']:>9.3f} "
                  f"{top_seconds:>7}  {top_best['config_key']} ({loss:+.2f}% vs the full tune's "
                  f"best, tune {ratio:.1f}x faster)")
    print()
    print(f"{'GEMM size':<10} best stride per binary (median ms)")
    for name in sorted(results, key=lambda n: int(re.sub(r"\D", "", n.split("_")[-1]) or 0)):
        match = re.search(rf"results/{gpu}/measured_gemm_(\d+)\.json$", name)
        if not match:
            continue
        by_binary = {}
        for v in variants(results[name]):
            binary = re.sub(r"-swz[nm]?\d+$", "", v["config_key"])
            if binary not in by_binary or v["median_ms"] < by_binary[binary]["median_ms"]:
                by_binary[binary] = v
        cells = [f"{b.split('-')[0]}: {v['config_key'].rsplit('-', 1)[1]} {v['median_ms']:.3f}"
                 for b, v in sorted(by_binary.items())]
        print(f"{match.group(1):<10} " + "; ".join(cells))
    failed = [name for name, (rc, _) in steps.items() if rc not in (0, None)]
    print()
    print("steps that failed: " + (", ".join(failed) if failed else "none"))


if __name__ == "__main__":
    main()
