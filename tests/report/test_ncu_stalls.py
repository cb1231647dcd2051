"""bench/ncu_stalls.py on the Nsight Compute source pages kept in bench/results (swr's and
FlashAttention-4's attention backward on the H200): every sample is counted once, under its reason
and its instruction's opcode, and bad arguments stop with one line and exit code 2.
Run: python3 -m unittest discover -s tests/report -p 'test_*.py'
"""
import contextlib
import io
import os
import sys
import unittest

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPOSITORY, "bench"))

import ncu_stalls  # noqa: E402

PROFILE = os.path.join(REPOSITORY, "bench", "results", "attention-backward-ws-h200",
                       "masks-2026-11-25", "profile")
SWR = os.path.join(PROFILE, "swr-d64c-source.csv.xz")
FA4 = os.path.join(PROFILE, "fa4-d64c-source.csv.xz")


class NcuStallsTest(unittest.TestCase):
    def test_every_sample_is_counted_once_by_reason_and_by_opcode(self):
        rows = ncu_stalls.read_rows(SWR)
        totals, by_opcode = ncu_stalls.stalls(rows)
        # The page's own per-instruction sample count is the sum over the reasons.
        sampled = sum(ncu_stalls.number(row["Warp Stall Sampling (All Samples)"]) for row in rows)
        self.assertGreater(sampled, 0)
        self.assertEqual(sum(totals.values()), sampled)
        for reason, samples in totals.items():
            self.assertEqual(sum(by_opcode[reason].values()), samples)
        self.assertIn("HGMMA", by_opcode["wait"])

    def test_opcode_skips_a_predicate_guard(self):
        self.assertEqual(ncu_stalls.opcode("@!P0 SYNCS.ARRIVE.TRANS64.A1T0 RZ, [R11+URZ], RZ"),
                         "SYNCS")
        self.assertEqual(ncu_stalls.opcode("      WARPGROUP.DEPBAR.LE gsb0, 0x1"), "WARPGROUP")

    def test_table_gives_samples_and_samples_per_ms(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(ncu_stalls.main([f"swr={SWR}:5.16", f"fa4={FA4}:4.54"]), 0)
        lines = out.getvalue().splitlines()
        all_row = next(line for line in lines if line.startswith("| all |"))
        cells = [cell.strip() for cell in all_row.strip("|").split("|")][1:]
        self.assertAlmostEqual(float(cells[1]), float(cells[0]) / 5.16, delta=1)
        self.assertAlmostEqual(float(cells[3]), float(cells[2]) / 4.54, delta=1)
        self.assertTrue(any(line.startswith("  fa4: ") for line in lines))

    def test_sequence_lists_the_loops_synchronizing_instructions_in_program_order(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(ncu_stalls.main([f"swr={SWR}:5.16", "--sequence", "2000000"]), 0)
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], "swr:")
        entries = [line.split(None, 1)[1] for line in lines[1:]]
        # Between two synchronizing instructions, the others as one line; the loop's size last.
        self.assertTrue(any(entry.endswith("other instructions)") for entry in entries))
        self.assertRegex(entries[-1], r"^in all: \d+ instructions a step$")
        steps = int(entries[-1].split()[2])
        self.assertGreater(steps, 400)  # the d2f5997 D64 causal loop: 818 a consumer step
        self.assertLess(steps, 1200)
        listed = [entry for entry in entries[:-1] if not entry.startswith("(")]
        self.assertTrue(listed)
        self.assertTrue(all(ncu_stalls.opcode(line) in ncu_stalls.SYNCHRONIZING for line in listed))
        # Program order: the scores' wgmma come before the barrier of the consumers, dQ's after.
        barrier = next(i for i, line in enumerate(listed) if line.startswith("BAR.SYNC"))
        self.assertTrue(any(line.startswith("HGMMA.64x128x16") for line in listed[:barrier]))
        self.assertTrue(any(".tnspA.tnspB" in line for line in listed[barrier:]))

    def test_bad_arguments_stop_with_exit_code_2(self):
        for argument in ("swr", "swr=x.csv:fast", f"swr={SWR}:0", "swr=/no/such/file.csv:1"):
            with contextlib.redirect_stderr(io.StringIO()) as err:
                with self.assertRaises(SystemExit) as stop:
                    ncu_stalls.main([argument])
            self.assertEqual(stop.exception.code, 2)
            self.assertIn("NAME=CSV:MS", err.getvalue())


if __name__ == "__main__":
    unittest.main()
