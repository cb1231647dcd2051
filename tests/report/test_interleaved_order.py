"""device_timing.time_interleaved's order within a round and its run log, and
bench/training_step.py's table of each candidate's runs by the call before it, without a GPU: the
rotating order keeps a candidate's predecessor fixed, the shuffled one permutes every round (the
same seed, the same rounds), the balanced one runs whole Williams cycles (every pair side by side
equally often, everyone in every round), every run is logged with the call before it, and the
medians by predecessor and the side-by-side comparison are read back from results files.
Run: python3 -m unittest discover -s tests/report -p 'test_*.py'
"""
import os
import random
import sys
import types
import unittest

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPOSITORY, "bench"))

import device_timing  # noqa: E402
import training_step  # noqa: E402


class ClockTorch:
    """torch.cuda's events over a clock the candidates advance: a run's time is what its call
    added."""

    def __init__(self):
        self.now = 0.0
        outer = self

        class Event:
            def __init__(self, enable_timing=False):
                self.at = None

            def record(self):
                self.at = outer.now

            def synchronize(self):
                pass

            def elapsed_time(self, end):
                return end.at - self.at

        self.cuda = types.SimpleNamespace(Event=Event, synchronize=lambda: None)


def timed_calls(torch, costs, order, seed=0, target_s=0.01):
    """Runs time_interleaved over candidates that each take costs[name] ms; returns (summaries,
    the names in the order they ran, the run log)."""
    ran = []

    def call(name):
        def run():
            ran.append(name)
            torch.now += costs[name]
        return run

    log = []
    summaries = device_timing.time_interleaved(
        torch, {name: call(name) for name in costs}, lambda: None, target_s=target_s,
        min_reps=3, max_reps=6, order=order, seed=seed, run_log=log)
    return summaries, ran, log


def first_rounds(names, order, count, seed=7):
    orders = device_timing.round_orders(names, order, random.Random(seed))
    return [next(orders) for _ in range(count)]


class RoundOrders(unittest.TestCase):
    names = ["a", "b", "c", "d"]

    def test_rotating_starts_each_round_one_later(self):
        rounds = first_rounds(self.names, "rotating", 6)
        self.assertEqual(rounds[0], self.names)
        self.assertEqual(rounds[5], ["b", "c", "d", "a"])

    def test_shuffled_permutes_every_round_and_repeats_with_the_seed(self):
        rounds = first_rounds(self.names, "shuffled", 20)
        self.assertEqual(rounds, first_rounds(self.names, "shuffled", 20))
        for permuted in rounds:
            self.assertEqual(sorted(permuted), self.names)
        self.assertGreater(len({tuple(p) for p in rounds}), 5)

    def test_williams_rows_put_every_pair_side_by_side_equally_often(self):
        for n in range(2, 10):
            rows = device_timing.williams_rows(n)
            self.assertEqual(len(rows), n if n % 2 == 0 else 2 * n)
            pairs = {}
            for row in rows:
                self.assertEqual(sorted(row), list(range(n)))
                for before, after in zip(row, row[1:]):
                    pairs[before, after] = pairs.get((before, after), 0) + 1
            self.assertEqual(len(pairs), n * (n - 1), n)
            self.assertEqual(set(pairs.values()), {1 if n % 2 == 0 else 2}, n)
        self.assertEqual(device_timing.williams_rows(1), [[0]])

    def test_balanced_cycles_relabel_the_candidates(self):
        names = ["a", "b", "c", "d", "e", "f"]
        rounds = first_rounds(names, "balanced", 4 * len(names))
        cycles = [rounds[i:i + len(names)] for i in range(0, len(rounds), len(names))]
        for cycle in cycles:
            pairs = [(x, y) for row in cycle for x, y in zip(row, row[1:])]
            self.assertEqual(len(set(pairs)), len(names) * (len(names) - 1))
        self.assertGreater(len({tuple(cycle[0]) for cycle in cycles}), 1)

    def test_an_unknown_order_is_refused(self):
        with self.assertRaisesRegex(ValueError, "allowed balanced, shuffled, rotating"):
            device_timing.round_orders(self.names, "sorted", random.Random(0))


class TimeInterleaved(unittest.TestCase):
    costs = {"fast": 1.0, "middle": 2.0, "slow": 4.0}

    def test_rotating_runs_a_candidate_after_the_same_one_within_a_round(self):
        torch = ClockTorch()
        summaries, ran, log = timed_calls(torch, self.costs, "rotating", target_s=0.001)
        self.assertEqual(ran[:3], ["fast", "middle", "slow"])  # the warm-up
        self.assertEqual([summaries[n]["median_ms"] for n in self.costs], [1.0, 2.0, 4.0])
        within = {(run["after"], run["name"]) for run in log[1:]
                  if run["round"] == log[log.index(run) - 1]["round"]}
        self.assertEqual(within, {("fast", "middle"), ("middle", "slow"), ("slow", "fast")})

    def test_shuffled_gives_each_candidate_other_predecessors_and_logs_every_run(self):
        torch = ClockTorch()
        summaries, ran, log = timed_calls(torch, self.costs, "shuffled", target_s=0.02)
        self.assertEqual(len(log), len(ran) - 3)  # every timed run, none of the warm-up
        self.assertEqual(log[0]["after"], "slow")  # the last warm-up call
        for run, before in zip(log[1:], log):
            self.assertEqual(run["after"], before["name"])
        for name, summary in summaries.items():
            self.assertEqual(summary["runs"], sum(run["name"] == name for run in log))
            self.assertEqual(summary["median_ms"], self.costs[name])
        predecessors = {}
        for run in log:
            predecessors.setdefault(run["name"], set()).add(run["after"])
        self.assertTrue(all(len(seen) >= 2 for seen in predecessors.values()))

    def test_balanced_runs_every_candidate_in_whole_cycles(self):
        torch = ClockTorch()
        summaries, _, log = timed_calls(torch, self.costs, "balanced", target_s=0.004)
        # fast wants 4 runs: one whole cycle of six rows (three candidates, odd) for everyone
        self.assertEqual({s["runs"] for s in summaries.values()}, {6})
        self.assertEqual([summaries[n]["median_ms"] for n in self.costs], [1.0, 2.0, 4.0])
        self.assertEqual(len({run["round"] for run in log}), 6)

    def test_the_first_round_sizes_the_runs(self):
        torch = ClockTorch()
        summaries, _, _ = timed_calls(torch, {"quick": 1.0, "long": 100.0}, "shuffled",
                                      target_s=0.004)
        self.assertEqual(summaries["quick"]["runs"], 4)  # 4 ms / 1 ms
        self.assertEqual(summaries["long"]["runs"], 3)  # at least min_reps


class PredecessorTable(unittest.TestCase):
    runs = [{"name": "swr fwd+bwd", "after": "fa4 fwd", "ms": 11.0},
            {"name": "swr fwd+bwd", "after": "fa4 fwd", "ms": 11.0},
            {"name": "swr fwd+bwd", "after": "flash2 fwd", "ms": 9.0},
            {"name": "swr fwd", "after": "swr fwd+bwd", "ms": 3.0}]

    def test_medians_by_the_call_before_over_the_candidates_median(self):
        text = training_step.predecessor_table(
            [{"points": [{"point": "2x16x16384x128-causal", "runs": self.runs}]}])
        lines = text.splitlines()
        self.assertIn("swr fwd+bwd", lines[0])  # fwd+bwd candidates only: one line a point
        self.assertIn("11.000 ms", lines[0])
        self.assertIn("fa4 fwd 1.000 (2)", lines[0])
        self.assertIn("flash2 fwd 0.818 (1)", lines[0])
        self.assertEqual(lines[-2].split(), ["fa4", "fwd", "1.000", "(2)"])
        self.assertEqual(lines[-1].split(), ["flash2", "fwd", "0.818", "(1)"])

    def test_several_files_pooled_without_per_point_lines(self):
        other = [dict(run, ms=run["ms"] * 2) for run in self.runs]
        text = training_step.predecessor_table(
            [{"points": [{"point": "p", "runs": self.runs}]},
             {"points": [{"point": "p", "runs": other}]}])
        self.assertNotIn("ms |", text)
        self.assertIn("2 file(s)", text)
        self.assertIn("fa4 fwd 1.000 (4)", " ".join(text.split()))


class CompareTable(unittest.TestCase):
    def test_one_column_a_file_and_missing_figures_as_dashes(self):
        def results(ratio, fa4):
            candidates = {"swr": {"fwd_bwd_tflops": 500.0}}
            if fa4 is not None:
                candidates["fa4"] = {"fwd_bwd_tflops": fa4}
            point = {"point": "1x8x8192x256-causal", "candidates": candidates}
            if ratio is not None:
                point["swr_vs_faster_of_fa4_cudnn"] = ratio
            return {"points": [point]}

        text = training_step.compare_table([results(0.95, 526.0), results(None, None)],
                                           ["a.json", "b.json.xz"])
        self.assertIn("[1] b.json.xz", text)
        row = text.splitlines()[-1].split()
        self.assertEqual(row, ["1x8x8192x256-causal", "0.950", "-", "526.0", "-", "500.0",
                               "500.0"])

    def test_points_matched_by_name_when_the_files_measured_different_ones(self):
        def results(*points):
            return {"points": [{"point": name, "swr_vs_faster_of_fa4_cudnn": ratio,
                                "candidates": {"swr": {"fwd_bwd_tflops": 500.0}}}
                               for name, ratio in points]}

        text = training_step.compare_table(
            [results(("a", 0.9), ("b", 0.8)), results(("b", 0.7), ("c", 0.6))], ["x", "y"])
        rows = {line.split()[0]: line.split()[1:3] for line in text.splitlines()[2:]}
        self.assertEqual(rows, {"a": ["0.900", "-"], "b": ["0.800", "0.700"],
                                "c": ["-", "0.600"]})


class RoundsTable(unittest.TestCase):
    def test_each_points_rounds_median_extremes_and_count_at_or_above_one(self):
        def round_of(ratio_a, ratio_b, swr_bwd):
            return {"points": [
                {"point": "zz-extra", "swr_vs_faster_of_fa4_cudnn": ratio_b,
                 "candidates": {"swr": {"bwd_tflops": swr_bwd},
                                "fa4": {"bwd_tflops": 500.0, "fwd_tflops": 400.0}}},
                {"point": training_step.DEFAULT_POINTS[0], "swr_vs_faster_of_fa4_cudnn": ratio_a,
                 "candidates": {"swr": {"bwd_tflops": swr_bwd}}}]}

        rounds = [round_of(1.02, 0.99, 510.0), round_of(0.98, None, 530.0),
                  round_of(1.00, 1.01, 520.0)]
        rows = [[cell.strip() for cell in line.strip("|").split("|")]
                for line in training_step.rounds_table(rounds).splitlines()[2:]]
        self.assertEqual(rows[0], [training_step.DEFAULT_POINTS[0], "1.020 0.980 1.000", "1.000",
                                   "0.980", "1.020", "2 of 3", "520.0", "-", "-", "-"])
        self.assertEqual(rows[1], ["zz-extra", "0.990 - 1.010", "1.000", "0.990", "1.010",
                                   "1 of 2", "520.0", "500.0", "-", "400.0"])


class MergedResults(unittest.TestCase):
    def test_a_split_runs_shares_become_one_table_in_the_grids_order(self):
        def share(*names):
            return {"device": "H200", "points": [
                {"point": name, "swr_vs_faster_of_fa4_cudnn": 1.0,
                 "candidates": {"swr": {"fwd_bwd_tflops": 500.0}}} for name in names]}

        grid = training_step.DEFAULT_POINTS
        merged = training_step.merged_results(
            [share(grid[1], "2x8x2048x64-causal", grid[2]), share(grid[3], grid[0])])
        self.assertEqual(merged["device"], "H200")
        self.assertEqual([point["point"] for point in merged["points"]],
                         [grid[0], grid[1], grid[2], grid[3], "2x8x2048x64-causal"])
        rows = training_step.markdown_table(merged).splitlines()[2:]
        self.assertEqual(len(rows), 5)
        self.assertTrue(rows[0].startswith("| 4 x 32 x 4096 x 64 |"), rows[0])


if __name__ == "__main__":
    unittest.main()
