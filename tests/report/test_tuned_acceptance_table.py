"""bench/tuned_acceptance_table.py on the results kept in bench/results (issue 12's tuned
head-to-head on the H200): the JSON and the CSV of a run read the same way, every point's row
says what the runtime chose and whether its output was the poisoned block, and the coverage table
reads the space each tune was given against what the database holds.
Run: python3 -m unittest discover -s tests/report -p 'test_*.py'
"""
import contextlib
import io
import lzma
import os
import shutil
import sys
import tempfile
import unittest

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPOSITORY, "bench"))

import tuned_acceptance_table  # noqa: E402

RESULTS = os.path.join(REPOSITORY, "bench", "results", "wgmma-attention-h200", "tuned-2026-11-23")
CALL1, CALL2 = os.path.join(RESULTS, "call1"), os.path.join(RESULTS, "call2")


def setUpModule():
    # The call's database is kept xz-compressed in the repository (8 MB as SQLite).
    global DATABASE, _scratch
    _scratch = tempfile.mkdtemp()
    DATABASE = os.path.join(_scratch, "tuned.db")
    with lzma.open(os.path.join(CALL2, "tuned.db.xz")) as packed, open(DATABASE, "wb") as out:
        shutil.copyfileobj(packed, out)


def tearDownModule():
    shutil.rmtree(_scratch, ignore_errors=True)


def table_rows(markdown):
    return [line for line in markdown.splitlines()
            if line.startswith("| ") and not line.startswith(("| B ", "| problem "))
            and "---" not in line]


class TunedAcceptanceTableTest(unittest.TestCase):
    def test_json_and_csv_of_a_run_read_alike(self):
        from_json = tuned_acceptance_table.load_points(
            os.path.join(CALL1, "bench-bf16", "results.json"))
        from_csv = tuned_acceptance_table.load_points(
            os.path.join(CALL1, "bench-bf16", "results.csv"))
        self.assertEqual(len(from_json), len(from_csv))
        for (point_j, cand_j), (point_c, cand_c) in zip(from_json, from_csv):
            self.assertEqual(point_j["key"], point_c["key"])
            self.assertEqual(point_j["swr_config"], point_c["swr_config"])
            for name in ("swr", "cudnn", "flash2"):
                self.assertAlmostEqual(cand_j[name]["median_ms"], cand_c[name]["median_ms"],
                                       places=6)

    def test_every_point_row_has_the_choice_and_the_poison_check(self):
        best = tuned_acceptance_table.tuner_medians(DATABASE)
        rows = table_rows(tuned_acceptance_table.head_to_head(
            os.path.join(CALL2, "bench-f16", "results.json"), best))
        self.assertEqual(len(rows), 12)
        for row in rows:
            cells = [c.strip() for c in row.strip("|").split("|")]
            self.assertTrue(cells[5].startswith("`wgmma-") or cells[5].startswith("`m"), row)
            self.assertEqual(cells[-1], "yes", row)
            self.assertNotEqual(cells[13], "-", row)  # the runtime ran the database's best
        csv_rows = table_rows(tuned_acceptance_table.head_to_head(
            os.path.join(CALL1, "bench-f16", "results.csv"), best))
        self.assertTrue(all(r.rstrip(" |").endswith("not recorded") for r in csv_rows))

    def test_coverage_compares_each_space_with_the_database(self):
        rows = table_rows(tuned_acceptance_table.coverage(DATABASE, os.path.join(CALL2, "keys")))
        self.assertEqual(len(rows), 18)
        for row in rows:
            cells = [c.strip() for c in row.strip("|").split("|")]
            space, ok, failed, missing = (int(c) for c in cells[1:5])
            self.assertEqual(ok + failed + missing, space, row)

    def test_a_missing_input_is_refused(self):
        with contextlib.redirect_stderr(io.StringIO()) as said:
            code = tuned_acceptance_table.main(["--database", "/nonexistent.db", "--keys",
                                                CALL2, "--results", CALL2])
        self.assertEqual(code, 2)
        self.assertIn("'/nonexistent.db' does not exist", said.getvalue())


if __name__ == "__main__":
    unittest.main()
