"""bench/backward_consumer_sync.py without a GPU: each schedule's lockstep and lagged variants
paired by the key without "-lag", medians over the rounds, only schedules measured both ways, and
failed variants left out.
Run: python3 -m unittest discover -s tests/report -p 'test_*.py'
"""
import json
import os
import sys
import tempfile
import unittest

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPOSITORY, "bench"))

import backward_consumer_sync  # noqa: E402


def show(problem, variants):
    """`swr-tune show --json` of one problem: (key, median ms, status) each variant."""
    return {"results": [{"problem": {"key": problem},
                         "variants": [{"config_key": key, "median_ms": ms, "status": status}
                                      for key, ms, status in variants]}]}


class ConsumerSyncPairs(unittest.TestCase):
    def test_schedule_drops_only_the_lag_token(self):
        self.assertEqual(backward_consumer_sync.schedule_of(
            "bwd-wgmma-m64n128w12s2-cyclic-grid-head_major-lag-det"),
            "bwd-wgmma-m64n128w12s2-cyclic-grid-head_major-det")
        plain = "bwd-m64n128w8s2-cyclic-grid-head_major"
        self.assertEqual(backward_consumer_sync.schedule_of(plain), plain)

    def test_twins_paired_over_rounds_and_unpaired_ones_left_out(self):
        key = "bwd-wgmma-m64n128w12s2-cyclic-grid-head_major"
        lockstep_only = "bwd-wgmma-m64n128w12s2-cyclic-static-head_major"
        rounds = [show("p_causal", [(key, 10.0, "ok"), (key + "-lag", 8.0, "ok"),
                                    (lockstep_only, 9.0, "ok")]),
                  show("p_causal", [(key, 12.0, "ok"), (key + "-lag", 12.0, "ok")]),
                  show("p_causal", [(key, 11.0, "ok"), (key + "-lag", 1.0, "fault")])]
        with tempfile.TemporaryDirectory() as folder:
            paths = []
            for i, data in enumerate(rounds):
                paths.append(os.path.join(folder, f"{i}.json"))
                with open(paths[-1], "w") as f:
                    json.dump(data, f)
            rows = backward_consumer_sync.rows(backward_consumer_sync.pairs(paths))
        self.assertEqual(len(rows), 1, "the static schedule ran lockstep only")
        row = rows[0]
        self.assertEqual(row["lockstep_ms"], [10.0, 12.0, 11.0])
        self.assertEqual(row["lagged_ms"], [8.0, 12.0], "the faulting run is no figure")
        self.assertTrue(row["causal"])
        self.assertAlmostEqual(row["lockstep_over_lagged"], 11.0 / 10.0)


if __name__ == "__main__":
    unittest.main()
