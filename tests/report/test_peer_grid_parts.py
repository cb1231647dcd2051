"""The parts of bench/peer_grid.py that need no GPU and no PyTorch: the grid, the choice of swr's
variant per point, the plan of compiles, timing statistics, the ratio tables and CSV, ncu's CSV.
Run: python3 -m unittest discover -s tests/report -p 'test_*.py'
"""
import contextlib
import csv
import glob
import io
import json
import math
import os
import sys
import tempfile
import unittest

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPOSITORY, "bench"))

import device_timing  # noqa: E402
import grid_points  # noqa: E402
import ncu_misses  # noqa: E402
import peer_grid  # noqa: E402
import ratio_table  # noqa: E402
import swr_choice  # noqa: E402

SWEEP = os.path.join(REPOSITORY, "bench", "results", "l2-sweep-h200")


def sweep_shapes():
    shapes = []
    for path in sorted(glob.glob(os.path.join(SWEEP, "measured_*.json"))):
        with open(path) as f:
            shapes += swr_choice.tuned_shapes_from_show_json(json.load(f), "h200")
    return shapes


def point_entry(regime, swr_ms, peers):
    candidates = {"swr": {"status": "ok", "median_ms": swr_ms, "tflops": 1.0 / swr_ms}}
    for name, ms in peers.items():
        candidates[name] = ({"status": "ok", "median_ms": ms, "tflops": 1.0 / ms} if ms
                            else {"status": "unavailable", "note": "no kernel"})
    return {"family": "attention", "regime": regime, "key": "k", "describe": "point",
            "swr_config": "cfg", "swr_config_source": "tuned", "candidates": candidates}


class GridTest(unittest.TestCase):
    def test_full_grid_covers_both_papers_regimes_and_gemm(self):
        points = grid_points.full_grid()
        short = [p for p in points if p.regime == "short"]
        long = [p for p in points if p.regime == "long"]
        self.assertEqual(len(short), 5 * 4 * 2 * 2)  # S x D x dtype x causal
        self.assertEqual(len(long), 5 * 2 * 2)
        self.assertEqual(len([p for p in points if p.family == "gemm"]), 4)
        self.assertTrue(all(p.batch * p.seq == 16384 and p.heads == 16 for p in short))
        self.assertTrue(all(p.batch == 8 and p.heads == 1 for p in long))
        self.assertEqual({p.seq for p in long}, {16384, 32768, 65536, 131072, 262144})
        self.assertEqual(len({p.key() for p in points}), len(points))

    def test_keys_and_flops_follow_swr(self):
        point = grid_points.AttentionPoint("long", 8, 1, 131072, 128, "f16", True)
        self.assertEqual(point.key(), "b8_h1_sq131072_skv131072_d128_f16_causal")
        self.assertEqual(point.flops(), 4.0 * 8 * 131072 * 131072 * 128 / 2)
        self.assertFalse(grid_points.AttentionPoint("short", 1, 16, 512, 96, "f16",
                                                    False).swr_supported())


class SwrChoiceTest(unittest.TestCase):
    def setUp(self):
        self.shapes = sweep_shapes()

    def test_reads_every_shape_of_the_sweep_dumps(self):
        self.assertEqual(len(self.shapes), 20)
        shape = next(s for s in self.shapes
                     if s.problem_key == "b8_h1_sq16384_skv16384_d64_f16_noncausal")
        self.assertEqual(shape.l2_sector_misses, 2114260.0)  # the fastest variant's count

    def test_a_tuned_shape_gets_its_best(self):
        point = grid_points.AttentionPoint("long", 8, 1, 65536, 128, "f16", False)
        choice = swr_choice.choose_config(point, self.shapes)
        self.assertEqual(choice.source, "tuned")
        self.assertEqual(choice.tuned.problem_key, point.key())

    def test_an_untuned_shape_gets_the_nearest_then_the_default(self):
        point = grid_points.AttentionPoint("short", 4, 16, 4096, 128, "f16", True)
        choice = swr_choice.choose_config(point, self.shapes)
        self.assertEqual(choice.source, "nearest")
        self.assertEqual(choice.tuned.problem_key, "b8_h1_sq16384_skv16384_d128_f16_causal")
        bf16 = grid_points.AttentionPoint("short", 4, 16, 4096, 128, "bf16", True)
        self.assertIn("other dtype", swr_choice.choose_config(bf16, self.shapes).note)
        self.assertEqual(swr_choice.choose_config(point, []).config_key,
                         swr_choice.DEFAULT_CONFIG)

    def test_summary_form_of_show_json(self):
        document = {"results": [{"gpu": {"name": "h200"}, "problem": {
            "family": "attention", "key": "b1_h1_sq512_skv512_d64_f16_noncausal", "batch": 1,
            "heads": 1, "seq_q": 512, "seq_kv": 512, "head_dim": 64, "dtype": "f16",
            "causal": False}, "best": {"config_key": "m64n64w4s2-cyclic-grid-head_major",
                                      "median_ms": 0.1}}]}
        shapes = swr_choice.tuned_shapes_from_show_json(document, "h200")
        self.assertEqual([s.config_key for s in shapes], ["m64n64w4s2-cyclic-grid-head_major"])
        self.assertEqual(swr_choice.tuned_shapes_from_show_json(document, "gb10"), [])


class ExportTest(unittest.TestCase):
    MANIFEST = {"format": "swr-kernel-export", "schema_version": 1, "gpu": "h200", "kernels": [{
        "gpu": {"name": "h200"},
        "problem": {"family": "attention", "key": "b8_h1_sq16384_skv16384_d128_f16_noncausal",
                    "batch": 8, "heads": 1, "seq_q": 16384, "seq_kv": 16384, "head_dim": 128,
                    "dtype": "f16", "causal": False},
        "config_key": "m128n64w4s2-cyclic-grid-head_major",
        "config": {"block_m": 128, "persistence": "grid"}, "entry": "swr_attention_forward",
        "block_threads": 128, "dynamic_shared_bytes": 49152,
        "cubin": {"file": "k.cubin"}, "measured": {"status": "ok", "median_ms": 1.5,
                                                   "l2_sector_misses": 123.0}}]}

    def test_exported_kernels_are_tuned_shapes_whose_cubins_need_no_compile(self):
        shapes = swr_choice.tuned_shapes_from_export(self.MANIFEST, "h200")
        self.assertEqual([(s.problem_key, s.l2_sector_misses) for s in shapes],
                         [("b8_h1_sq16384_skv16384_d128_f16_noncausal", 123.0)])
        cubins = swr_choice.exported_cubins(self.MANIFEST, "/export")
        key = (128, "f16", False, "m128n64w4s2-cyclic-grid-head_major")
        self.assertEqual(cubins[key][2]["file"], "k.cubin")
        points = grid_points.long_grid(seqs=(16384, 32768), head_dims=(128,))
        entries, requests = peer_grid.plan_points(points, shapes, "WORK", cubins)
        self.assertEqual([r.shape[3:] for r in requests], [(128, "f16", True)])  # causal only
        self.assertEqual(entries[1]["swr_config_source"], "nearest")


class PlanTest(unittest.TestCase):
    def test_one_compile_per_kernel_and_unsupported_head_dims_said(self):
        points = grid_points.full_grid()
        entries, requests = peer_grid.plan_points(points, sweep_shapes(), "WORK")
        unsupported = [e for e in entries if e.get("swr_config_source") == "unsupported"]
        self.assertEqual(len(unsupported), 40)  # D=96 and D=160 of the short grid
        kernels = [(r.shape[3:], key) for r in requests for key in r.keys]
        self.assertEqual(len(kernels), len(set(kernels)))
        needed = {(e["head_dim"], e["dtype"], e["causal"], e["swr_config"]) for e in entries
                  if e.get("swr_config")}
        self.assertEqual(needed, {shape + (key,) for shape, key in kernels})

    def test_dry_run_prints_the_plan_without_torch(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            peer_grid.main(["--dry-run", "--quick", "--show-json"] +
                           sorted(glob.glob(os.path.join(SWEEP, "measured_*.json"))))
        self.assertIn("swr-tune compile", out.getvalue())
        self.assertIn("head dim 64 and 128 only", out.getvalue())
        self.assertNotIn("torch", sys.modules)


FAKE_SWR_TUNE = """#!/usr/bin/env python3
import json, os, sys
arguments = sys.argv[1:]
if arguments == ["--version"]:
    print("swr-tune fake")
    sys.exit(0)
out = arguments[arguments.index("--out") + 1]
keys = [arguments[i + 1] for i, a in enumerate(arguments) if a == "--config"]
kernels = []
for key in keys:
    with open(os.path.join(out, key + ".cubin"), "wb") as f:
        f.write(b"cubin")
    parts = key.split("-")
    kernels.append({"key": key, "file": key + ".cubin", "threads": 128,
                    "dynamic_shared_bytes": 49152,
                    "config": {"block_m": int(parts[0][1:parts[0].index("n")]),
                               "persistence": parts[2]}})
with open(os.path.join(out, "kernels.json"), "w") as f:
    json.dump({"entry": "swr_attention_forward", "kernels": kernels, "failed": []}, f)
"""


class FakeGpuRunTest(unittest.TestCase):
    """The GPU path of peer_grid.py on fake_torch: every stage runs and records what it should."""

    def test_quick_grid_end_to_end(self):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import fake_torch
        import swr_kernels

        saved_modules = dict(sys.modules)
        saved_driver = swr_kernels.Driver
        fake_torch.install()
        swr_kernels.Driver = fake_torch.FakeDriver
        try:
            with tempfile.TemporaryDirectory() as directory:
                tool = os.path.join(directory, "swr-tune")
                with open(tool, "w") as f:
                    f.write(FAKE_SWR_TUNE)
                os.chmod(tool, 0o755)
                out = os.path.join(directory, "out")
                with contextlib.redirect_stdout(io.StringIO()) as printed:
                    peer_grid.main(["--quick", "--swr-tune", tool, "--out", out, "--show-json"] +
                                   sorted(glob.glob(os.path.join(SWEEP, "measured_*.json"))))
                with open(os.path.join(out, "results.json")) as f:
                    document = json.load(f)
                with open(os.path.join(out, "table.txt")) as f:
                    table = f.read()
                self.assertTrue(os.path.getsize(os.path.join(out, "results.csv")) > 0)
        finally:
            swr_kernels.Driver = saved_driver
            for name in [n for n in sys.modules if n.startswith("torch")]:
                del sys.modules[name]
            sys.modules.update(saved_modules)

        self.assertEqual(document["schema"], "swr-peer-grid/1")
        record = document["record"]
        for field in ("gpu", "driver", "cuda_runtime_of_torch", "torch", "cudnn",
                      "flash_attn_package", "command", "commit", "swr_tune_version",
                      "cuda_driver_api", "finished_at"):
            self.assertIn(field, record)
        self.assertEqual(record["cuda_driver_api"], "13.0")
        self.assertIn("--quick", record["command"])
        points = document["points"]
        self.assertEqual(len(points), len(grid_points.full_grid(quick=True)))
        status = {(p["key"], name): c["status"] for p in points
                  for name, c in p["candidates"].items()}
        d64 = "b4_h16_sq4096_skv4096_d64_f16_noncausal"
        d96 = "b4_h16_sq4096_skv4096_d96_f16_noncausal"
        self.assertEqual(status[(d64, "swr")], "ok")
        self.assertEqual(status[(d96, "swr")], "unsupported")
        self.assertEqual(status[(d96, "flash2")], "ok")
        self.assertEqual(status[(d64, "cudnn")], "missing")
        self.assertEqual(status[("m2048_n2048_k2048_f16", "cublas")], "ok")
        self.assertEqual(status[("m2048_n2048_k2048_f16", "swr")], "missing")
        tuned = next(p for p in points if p["key"] == "b8_h1_sq16384_skv16384_d64_f16_noncausal")
        self.assertEqual(tuned["swr_config_source"], "tuned")
        self.assertEqual(tuned["candidates"]["swr"]["l2_sector_misses"], 2114260.0)
        self.assertEqual(tuned["candidates"]["swr"]["relative_error"], 0.0)
        self.assertIn("geometric mean", table)
        self.assertIn("compiled", printed.getvalue())


class TimingTest(unittest.TestCase):
    def test_statistics_and_rounds(self):
        summary = device_timing.summarize([3.0, 1.0, 2.0, 10.0])
        self.assertEqual((summary["median_ms"], summary["p95_ms"], summary["min_ms"]),
                         (2.5, 10.0, 1.0))
        self.assertEqual(device_timing.rounds_for(0.01, 0.3, 3, 20), 20)
        self.assertEqual(device_timing.rounds_for(800.0, 0.3, 3, 20), 3)
        self.assertEqual(device_timing.rounds_for(50.0, 0.3, 3, 20), 6)


class RatioTableTest(unittest.TestCase):
    def test_geometric_mean_per_regime_over_points_where_both_ran(self):
        points = [point_entry("short", 1.0, {"flash2": 2.0, "cudnn": 0.5}),
                  point_entry("short", 1.0, {"flash2": 0.5, "cudnn": None}),
                  point_entry("long", 2.0, {"flash2": 4.0, "cudnn": 1.0})]
        rows = {(r["regime"], r["peer"]): r for r in ratio_table.regime_summary(points)}
        self.assertAlmostEqual(rows[("short", "flash2")]["geomean"], 1.0)
        self.assertEqual(rows[("short", "cudnn")]["points"], 1)
        self.assertEqual(rows[("long", "flash2")]["wins"], 1)
        text = ratio_table.summary_table(points, {"short": "Short"})
        self.assertIn("Short: vs flash2: geometric mean 1.00x", text)
        self.assertIn("n/a", ratio_table.point_table(points))

    def test_csv_has_one_row_per_candidate(self):
        points = [point_entry("short", 1.0, {"flash2": 2.0, "cudnn": None})]
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "results.csv")
            ratio_table.write_csv(path, points)
            with open(path) as f:
                rows = list(csv.DictReader(f))
        self.assertEqual([r["candidate"] for r in rows], ["swr", "flash2", "cudnn"])
        self.assertEqual(rows[0]["config"], "cfg")
        self.assertEqual(rows[2]["status"], "unavailable")


class NcuCsvTest(unittest.TestCase):
    def test_sums_the_metric_over_every_kernel_row(self):
        text = ('==PROF== Connected to process\n'
                '"ID","Kernel Name","lts__t_sectors_srcunit_tex_lookup_miss.sum"\n'
                '"","","sector"\n'
                '"0","flash_fwd","1,000"\n'
                '"1","softmax","234.5"\n')
        self.assertEqual(ncu_misses.sum_metric(text), 1234.5)
        self.assertIsNone(ncu_misses.sum_metric("no csv here"))
        self.assertTrue(math.isclose(ncu_misses.sum_metric(text.replace("1,000", "0")), 234.5))


if __name__ == "__main__":
    unittest.main()
