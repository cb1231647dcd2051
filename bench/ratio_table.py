"""The grid's results as a person reads them: throughput ratios swr/peer per point (peer time over
swr time: above 1 means swr is faster), their geometric mean per regime, and the CSV with every
candidate of every point. Pure Python.
"""
import csv
import math

PEER_ORDER = ("flash2", "flash4", "cudnn", "efficient", "math", "cublas")
CSV_COLUMNS = ("family", "regime", "key", "batch", "heads", "seq", "head_dim", "m", "n", "k",
               "dtype", "causal", "candidate", "status", "median_ms", "p95_ms", "min_ms", "runs",
               "tflops", "tokens_per_s", "relative_error", "l2_sector_misses", "l2_source",
               "config", "config_source", "note")


def ok(candidate):
    return bool(candidate) and candidate.get("status") == "ok"


def ratio(point, peer):
    """swr's throughput over the peer's on one point, or None when either did not run."""
    candidates = point["candidates"]
    swr, other = candidates.get("swr"), candidates.get(peer)
    if not (ok(swr) and ok(other)):
        return None
    return other["median_ms"] / swr["median_ms"]


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def peers_present(points):
    seen = {name for p in points for name in p["candidates"] if name != "swr"}
    return [name for name in PEER_ORDER if name in seen] + sorted(seen - set(PEER_ORDER))


def regime_summary(points):
    """[{regime, peer, points, geomean, min, max, wins}] for every (regime, peer) with a ratio."""
    rows = []
    regimes = []
    for p in points:
        if p["regime"] not in regimes:
            regimes.append(p["regime"])
    for regime in regimes:
        in_regime = [p for p in points if p["regime"] == regime]
        for peer in peers_present(in_regime):
            ratios = [r for r in (ratio(p, peer) for p in in_regime) if r is not None]
            if ratios:
                rows.append({"regime": regime, "peer": peer, "points": len(ratios),
                             "geomean": geometric_mean(ratios), "min": min(ratios),
                             "max": max(ratios), "wins": sum(1 for r in ratios if r > 1.0)})
    return rows


def _cell(candidate):
    if ok(candidate):
        return f"{candidate['tflops']:.0f}"
    return {"missing": "miss", "unavailable": "n/a", "unsupported": "unsup",
            "skipped": "skip", "wrong": "WRONG", "failed": "FAIL"}.get(
        (candidate or {}).get("status"), "-")


def point_table(points):
    """One line per point: TFLOP/s of swr and each peer, then swr/peer for each."""
    peers = peers_present(points)
    header = (["point", "swr config (source)", "swr"] + peers + [f"/{p}" for p in peers] +
              ["swr L2 misses"])
    rows = [header]
    for p in points:
        swr = p["candidates"].get("swr", {})
        config = f"{p.get('swr_config') or swr.get('config') or '-'} ({p.get('swr_config_source', '-')})"
        misses = swr.get("l2_sector_misses")
        rows.append([p["describe"], config, _cell(swr)] +
                    [_cell(p["candidates"].get(peer)) for peer in peers] +
                    [(f"{r:.2f}" if r is not None else "-") for r in (ratio(p, q) for q in peers)] +
                    [f"{misses:.3g}" if misses is not None else "-"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i < 2 else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(row, widths))) for row in rows]
    return "\n".join(lines)


def summary_table(points, titles):
    lines = ["swr / peer throughput ratio (peer time / swr time; > 1: swr faster), per regime:"]
    for row in regime_summary(points):
        lines.append(f"  {titles.get(row['regime'], row['regime'])}: vs {row['peer']}: geometric mean "
                     f"{row['geomean']:.2f}x (min {row['min']:.2f}, max {row['max']:.2f}, "
                     f"swr faster at {row['wins']} of {row['points']} points)")
    if len(lines) == 1:
        lines.append("  no point where swr and a peer both ran")
    return "\n".join(lines)


def write_csv(path, points):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for p in points:
            for name, candidate in p["candidates"].items():
                row = {column: p.get(column) for column in CSV_COLUMNS}
                row.update({k: v for k, v in candidate.items() if k in CSV_COLUMNS})
                row["candidate"] = name
                if name == "swr":
                    row["config"] = p.get("swr_config") or candidate.get("config")
                    row["config_source"] = p.get("swr_config_source")
                writer.writerow(row)
