"""The parts of bench/peer_grid.py that need no GPU and no PyTorch: the grid, the runtime's choice
of swr's variant per point and how a point reports it, the plan, timing statistics, the ratio
tables and CSV, ncu's CSV. The plan on a real catalog needs libswr_runtime.so ($SWR_RUNTIME_LIBRARY,
set by CTest) but no GPU.
Run: python3 -m unittest discover -s tests/report -p 'test_*.py'
"""
import contextlib
import csv
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
import swr_runtime  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_torch  # noqa: E402

# bench/results/gemm-sweep-h200/gemm.db.xz as the build tree decompressed it (tests/CMakeLists.txt).
GEMM_DATABASE = os.environ.get("SWR_TEST_GEMM_DB",
                               os.path.join(REPOSITORY, "build", "test-data", "gemm.db"))
TUNED = {  # what FakeCatalog answers from: two attention shapes and one GEMM
    "b8_h1_sq16384_skv16384_d64_f16_noncausal": (
        "m128n64w4s2-cyclic-grid-head_major",
        {"median_ms": 1.5, "l2_sector_misses": 2114260.0, "dram_read_bytes": 10.0,
         "dram_write_bytes": None}),
    "b8_h1_sq16384_skv16384_d128_f16_noncausal": (
        "m128n64w8s2-sawtooth-static-head_major", {"median_ms": 3.0}),
    "m4096_n4096_k4096_f16": ("m128n256k64w2x4s3-grid-swz0", {"median_ms": 0.31}),
}


@contextlib.contextmanager
def fake_gpu(catalog):
    """fake_torch in place of PyTorch (and of swr.torch) and `catalog` in place of every catalog
    opened, undone afterwards."""
    saved_modules = dict(sys.modules)
    saved_open, saved_entry = swr_runtime.open_catalog, swr_runtime.torch_entry
    fake_torch.install()
    swr_runtime.open_catalog = lambda path: catalog
    swr_runtime.torch_entry = lambda: fake_torch.FakeSwrTorch
    try:
        yield
    finally:
        swr_runtime.open_catalog, swr_runtime.torch_entry = saved_open, saved_entry
        for name in [n for n in sys.modules if n.startswith("torch")]:
            del sys.modules[name]
        sys.modules.update(saved_modules)


def runtime_library_loads():
    try:
        swr_runtime.binding()._native.native()
        return True
    except OSError:
        return False


def point_entry(regime, swr_ms, peers):
    candidates = {"swr": {"status": "ok", "median_ms": swr_ms, "tflops": 1.0 / swr_ms}}
    for name, ms in peers.items():
        candidates[name] = ({"status": "ok", "median_ms": ms, "tflops": 1.0 / ms} if ms
                            else {"status": "unavailable", "note": "no kernel"})
    return {"family": "attention", "regime": regime, "key": "k", "describe": "point",
            "swr_config": "cfg", "swr_config_source": "tuned", "candidates": candidates}


class GridTest(unittest.TestCase):
    def test_full_grid_covers_both_papers_regimes_models_and_gemm(self):
        points = grid_points.full_grid()
        short = [p for p in points if p.regime == "short"]
        long = [p for p in points if p.regime == "long"]
        models = [p for p in points if p.regime == "models"]
        self.assertEqual(len(short), 5 * 4 * 2 * 2)  # S x D x dtype x causal
        self.assertEqual(len(long), 5 * 2 * 2)
        self.assertEqual(len(models), 2 * 2 * 3)  # GQA D128 and D256 x causal x S
        self.assertTrue(all(p.batch * p.seq == 65536 for p in models))
        llama = [p for p in models if p.grouped()]
        self.assertEqual({(p.heads, p.kv_head_count(), p.head_dim) for p in llama}, {(32, 8, 128)})
        self.assertEqual({p.head_dim for p in models if not p.grouped()}, {256})
        self.assertEqual(len([p for p in points if p.family == "gemm"]), 4)
        self.assertTrue(all(p.batch * p.seq == 16384 and p.heads == 16 for p in short))
        self.assertTrue(all(p.batch == 8 and p.heads == 1 for p in long))
        self.assertEqual({p.seq for p in long}, {16384, 32768, 65536, 131072, 262144})
        self.assertEqual(len({p.key() for p in points}), len(points))

    def test_keys_and_flops_follow_swr(self):
        point = grid_points.AttentionPoint("long", 8, 1, 131072, 128, "f16", True)
        self.assertEqual(point.key(), "b8_h1_sq131072_skv131072_d128_f16_causal")
        self.assertEqual(point.flops(), 4.0 * 8 * 131072 * 131072 * 128 / 2)
        self.assertTrue(grid_points.AttentionPoint("short", 1, 16, 512, 96, "f16",
                                                   False).swr_supported())
        self.assertFalse(grid_points.AttentionPoint("short", 1, 16, 512, 48, "f16",
                                                    False).swr_supported())
        llama = grid_points.AttentionPoint("models", 2, 32, 8192, 128, "bf16", True, 8)
        self.assertEqual(llama.key(), "b2_h32_kv8_sq8192_skv8192_d128_bf16_causal")
        self.assertEqual(llama.describe(), "B2 H32/8 S8192 D128 bf16 causal")
        self.assertEqual(llama.as_json()["kv_heads"], 8)
        self.assertEqual(llama.flops(), 4.0 * 2 * 32 * 8192 * 8192 * 128 / 2)
        mha = grid_points.AttentionPoint("models", 2, 32, 8192, 128, "bf16", True, 32)
        self.assertFalse(mha.grouped())
        self.assertEqual(mha.key(), "b2_h32_sq8192_skv8192_d128_bf16_causal")


class ChoiceTest(unittest.TestCase):
    def test_each_point_says_which_rule_chose_swr_variant(self):
        catalog = fake_torch.FakeCatalog(TUNED)
        exact = grid_points.AttentionPoint("long", 8, 1, 16384, 64, "f16", False)
        fields = swr_runtime.attention_choice(catalog, "h200", exact)
        self.assertEqual((fields["swr_config"], fields["swr_config_source"]),
                         ("m128n64w4s2-cyclic-grid-head_major", "exact"))
        self.assertEqual(fields["swr_tuned"], {"l2_sector_misses": 2114260.0, "l2_hit_rate": None,
                                               "dram_bytes": 10.0, "tuner_median_ms": 1.5})
        nearest = grid_points.AttentionPoint("long", 8, 1, 65536, 64, "f16", False)
        fields = swr_runtime.attention_choice(catalog, "h200", nearest)
        self.assertEqual(fields["swr_config_source"], "nearest")
        self.assertIn("b8_h1_sq16384_skv16384_d64_f16_noncausal, distance 1.00", fields["swr_note"])
        self.assertNotIn("swr_tuned", fields)  # the tuner's counters belong to another shape
        causal = grid_points.AttentionPoint("long", 8, 1, 65536, 64, "f16", True)
        fields = swr_runtime.attention_choice(catalog, "h200", causal)
        self.assertEqual((fields["swr_config"], fields["swr_config_source"]), (None, "none"))
        self.assertIn("nothing tuned with _d64_f16_causal", fields["swr_note"])


class PlanTest(unittest.TestCase):
    def test_every_point_gets_the_runtime_choice_and_unsupported_head_dims_are_said(self):
        entries = peer_grid.plan_points(grid_points.full_grid(), fake_torch.FakeCatalog(TUNED),
                                        "h200")
        sources = [e["swr_config_source"] for e in entries]
        self.assertEqual(sources.count("unsupported"), 0)  # every head dim of the grid has kernels
        self.assertEqual(sources.count("exact"), 3)
        gemm = [e for e in entries if e["family"] == "gemm"]
        self.assertEqual([e["swr_config_source"] for e in gemm],
                         ["nearest", "nearest", "exact", "nearest"])
        causal = [e for e in entries if e.get("causal")]
        self.assertTrue(all(e["swr_config_source"] in ("none", "unsupported") for e in causal))

    @unittest.skipUnless(runtime_library_loads(), "libswr_runtime.so not built")
    def test_the_plan_on_a_real_database_is_the_runtime_lookup(self):
        with tempfile.TemporaryDirectory() as directory:
            database = os.path.join(directory, "gemm.db")
            with open(GEMM_DATABASE, "rb") as source, open(database, "wb") as copy:
                copy.write(source.read())
            catalog = swr_runtime.open_catalog(database)
            entries = peer_grid.plan_points(grid_points.full_grid(["gemm", "long"]), catalog,
                                            "h200")
            query = catalog.best_gemm("h200", 8192, 8192, 8192, "f16")
            catalog.close()
        gemm = {e["key"]: e for e in entries if e["family"] == "gemm"}
        self.assertEqual({e["swr_config_source"] for e in gemm.values()}, {"exact"})
        self.assertEqual(gemm["m8192_n8192_k8192_f16"]["swr_config"],
                         query["kernel"]["config_key"])
        long = [e for e in entries if e["family"] == "attention"]
        self.assertTrue(all(e["swr_config_source"] == "none" for e in long))  # GEMM-only file

    @unittest.skipUnless(runtime_library_loads(), "libswr_runtime.so not built")
    def test_dry_run_prints_the_plan_without_torch(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            peer_grid.main(["--dry-run", "--quick", "--catalog", GEMM_DATABASE])
        self.assertIn("GEMM 2048x2048x2048 f16: swr m128n256k64w2x4s3-grid-swzn256 (exact: tuned "
                      "at this shape on h200); peers cublas", out.getvalue())
        self.assertIn("(none: ", out.getvalue())
        self.assertIn("B16 H32/8 S4096 D128 f16", out.getvalue())
        self.assertNotIn("torch", sys.modules)


    @unittest.skipUnless(runtime_library_loads(), "libswr_runtime.so not built")
    def test_named_points_replace_the_grid(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            peer_grid.main(["--dry-run", "--catalog", GEMM_DATABASE, "--points",
                            "2048x2048x2048", "1x32x8192x128-kv8-causal"])
        self.assertIn("GEMM 2048x2048x2048 f16: swr m128n256k64w2x4s3-grid-swzn256 (exact: tuned "
                      "at this shape on h200); peers cublas", out.getvalue())
        self.assertIn("B1 H32/8 S8192 D128 f16 causal: swr - (none: ", out.getvalue())
        self.assertIn("flash4", out.getvalue())
        self.assertIn("\n2 points;", out.getvalue())

    def test_a_bad_point_is_named_with_exit_2(self):
        error = io.StringIO()
        with contextlib.redirect_stderr(error), self.assertRaises(SystemExit) as raised:
            peer_grid.main(["--dry-run", "--catalog", "unused.db", "--points", "1x2x3-causal"])
        self.assertEqual(raised.exception.code, 2)
        self.assertIn("bad point '1x2x3-causal': allowed BxHxSxD-causal", error.getvalue())


class FakeGpuRunTest(unittest.TestCase):
    """The GPU path of peer_grid.py on fake_torch and FakeCatalog: every stage runs and records
    what it should, and swr is launched through the catalog only."""

    def test_quick_grid_end_to_end(self):
        catalog = fake_torch.FakeCatalog(TUNED)
        with fake_gpu(catalog), tempfile.TemporaryDirectory() as directory:
            out = os.path.join(directory, "out")
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                peer_grid.main(["--quick", "--swr-tune", "/nonexistent/swr-tune", "--out", out,
                                "--catalog", "fake-export"])
            with open(os.path.join(out, "results.json")) as f:
                document = json.load(f)
            with open(os.path.join(out, "table.txt")) as f:
                table = f.read()
            self.assertTrue(os.path.getsize(os.path.join(out, "results.csv")) > 0)

        self.assertEqual(document["schema"], "swr-peer-grid/1")
        record = document["record"]
        for field in ("gpu", "driver", "cuda_runtime_of_torch", "torch", "cudnn",
                      "flash_attn_package", "command", "commit", "swr_tune_version",
                      "cuda_driver_api", "finished_at"):
            self.assertIn(field, record)
        self.assertEqual(record["swr_catalog"], "export /fake-export")
        self.assertIn("--quick", record["command"])
        points = document["points"]
        self.assertEqual(len(points), len(grid_points.full_grid(quick=True)))
        status = {(p["key"], name): c["status"] for p in points
                  for name, c in p["candidates"].items()}
        d64 = "b4_h16_sq4096_skv4096_d64_f16_noncausal"
        d96 = "b4_h16_sq4096_skv4096_d96_f16_noncausal"
        causal = "b4_h16_sq4096_skv4096_d64_f16_causal"
        self.assertEqual(status[(d64, "swr")], "ok")
        self.assertEqual(status[(d96, "swr")], "untuned")
        self.assertEqual(status[(causal, "swr")], "untuned")
        self.assertEqual(status[(d96, "flash2")], "ok")
        self.assertEqual(status[(d64, "cudnn")], "missing")
        self.assertEqual(status[("m2048_n2048_k2048_f16", "cublas")], "ok")
        self.assertEqual(status[("m2048_n2048_k2048_f16", "swr")], "ok")
        tuned = next(p for p in points if p["key"] == "b8_h1_sq16384_skv16384_d64_f16_noncausal")
        self.assertEqual(tuned["swr_config_source"], "exact")
        swr = tuned["candidates"]["swr"]
        self.assertEqual((swr["choice"], swr["config"]),
                         ("exact", "m128n64w4s2-cyclic-grid-head_major"))
        self.assertEqual(swr["l2_sector_misses"], 2114260.0)
        self.assertEqual(swr["relative_error"], 0.0)
        # Timed as often as the peers, in the same rounds: one variant, not the best of many.
        self.assertEqual(swr["runs"], tuned["candidates"]["flash2"]["runs"])
        self.assertTrue(all(gpu == "h200" for _, gpu, _ in catalog.runs))
        self.assertIn(("gemm", "h200", 0), catalog.runs)
        self.assertIn("geometric mean", table)
        self.assertIn("swr from export /fake-export", printed.getvalue())
        # GQA points: SDPA with enable_gqa, K/V repeated for a backend that refuses it.
        llama = next(p for p in points if p["key"] == "b16_h32_kv8_sq4096_skv4096_d128_f16_causal")
        self.assertEqual(llama["kv_heads"], 8)
        self.assertEqual(llama["candidates"]["flash2"]["status"], "ok")
        self.assertNotIn("kv_repeated", llama["candidates"]["flash2"])
        efficient = llama["candidates"]["efficient"]
        self.assertEqual((efficient["status"], efficient["kv_repeated"]), ("ok", True))
        self.assertIn("K/V repeated to every query head", efficient["note"])


class AttentionVsPytorchTest(unittest.TestCase):
    """bench/attention_vs_pytorch.py on fake_torch and FakeCatalog: the runtime's one choice per
    shape, timed in the same rounds as the peers, and a shape nothing tuned serves said so."""

    def test_a_few_shapes_end_to_end(self):
        import attention_vs_pytorch

        catalog = fake_torch.FakeCatalog(TUNED)
        with fake_gpu(catalog), tempfile.TemporaryDirectory() as directory:
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                attention_vs_pytorch.main(["--catalog", "fake-export", "--shapes", "8x1x16384",
                                           "--head-dims", "64", "--out", directory])
            with open(os.path.join(directory, "results.json")) as f:
                document = json.load(f)
        noncausal, causal = document["points"]
        swr = noncausal["candidates"]["swr"]
        self.assertEqual((swr["status"], swr["choice"], swr["config"]),
                         ("ok", "exact", "m128n64w4s2-cyclic-grid-head_major"))
        self.assertEqual(swr["runs"], noncausal["candidates"]["flash2"]["runs"])
        self.assertEqual(noncausal["candidates"]["cudnn"]["status"], "missing")
        self.assertEqual(causal["candidates"]["swr"]["status"], "untuned")
        self.assertEqual(len(catalog.runs), swr["runs"] + 2)  # + the check and the warm-up
        self.assertIn("swr/flash2", printed.getvalue())
        # The fake allocator never reuses memory: the check says its output was not the poisoned
        # block instead of claiming it was.
        self.assertIs(swr["output_poisoned"], False)

    def test_points_each_with_their_own_shape_and_mask(self):
        import attention_vs_pytorch

        catalog = fake_torch.FakeCatalog(TUNED)
        with fake_gpu(catalog), tempfile.TemporaryDirectory() as directory:
            with contextlib.redirect_stdout(io.StringIO()):
                attention_vs_pytorch.main(["--catalog", "fake-export", "--points",
                                           "8x1x16384x128-noncausal", "2x4x4096x64-causal",
                                           "--out", directory])
            with open(os.path.join(directory, "results.json")) as f:
                points = json.load(f)["points"]
        self.assertEqual([p["key"] for p in points],
                         ["b8_h1_sq16384_skv16384_d128_f16_noncausal",
                          "b2_h4_sq4096_skv4096_d64_f16_causal"])
        self.assertEqual(points[0]["candidates"]["swr"]["config"],
                         "m128n64w8s2-sawtooth-static-head_major")
        self.assertEqual(points[1]["candidates"]["swr"]["status"], "untuned")

    def test_a_grouped_query_point_runs_with_enable_gqa(self):
        import attention_vs_pytorch

        tuned = dict(TUNED)
        tuned["b1_h32_kv8_sq8192_skv8192_d128_f16_causal"] = (
            "m128n64w8s2-cyclic-static-groups4", {"median_ms": 2.0})
        catalog = fake_torch.FakeCatalog(tuned)
        with fake_gpu(catalog), tempfile.TemporaryDirectory() as directory:
            with contextlib.redirect_stdout(io.StringIO()):
                attention_vs_pytorch.main(["--catalog", "fake-export", "--points",
                                           "1x32x8192x128-kv8-causal", "--out", directory])
            with open(os.path.join(directory, "results.json")) as f:
                point = json.load(f)["points"][0]
        self.assertEqual(point["key"], "b1_h32_kv8_sq8192_skv8192_d128_f16_causal")
        self.assertEqual(point["candidates"]["swr"]["status"], "ok")
        self.assertEqual(point["candidates"]["swr"]["config"], "m128n64w8s2-cyclic-static-groups4")
        self.assertEqual(point["candidates"]["flash2"]["status"], "ok")

    def test_a_bad_point_is_refused_before_anything_runs(self):
        import attention_vs_pytorch

        for bad in ("8x1x16384-causal", "8x1x16384x64", "8x1x16384x64-sometimes",
                    "0x1x64x64-causal", "1x32x64x64-kv6-causal", "1x32x64x64-k8-causal"):
            with self.subTest(bad=bad), contextlib.redirect_stderr(io.StringIO()) as said:
                with self.assertRaises(SystemExit) as exited:
                    attention_vs_pytorch.main(["--catalog", "/nonexistent", "--points", bad,
                                               "--out", "/nonexistent/out"])
            self.assertEqual(exited.exception.code, 2)
            self.assertIn(f"bad point '{bad}'", said.getvalue())


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
