"""The Python binding (python/swr) over libswr_runtime.so, without a GPU: the library found where
$SWR_RUNTIME_LIBRARY says, lookups on a real results database (bench/results/gemm-sweep-h200,
copied) compared with what SQLite itself says is best, bad input as InvalidArgument with the C
API's message, and a run without a device as NoDevice. CTest runs it with SWR_RUNTIME_LIBRARY set
to the built library (python -m unittest; pytest runs it too)."""
import math
import os
import shutil
import sqlite3
import sys
import tempfile
import unittest
from pathlib import Path

# Every device hidden before the driver is first loaded: the runs below must find none.
os.environ["CUDA_VISIBLE_DEVICES"] = ""

REPOSITORY = Path(__file__).resolve().parents[2]
# $SWR_TEST_INSTALLED: test the installed package instead (tests/python/check_install.sh).
if not os.environ.get("SWR_TEST_INSTALLED"):
    sys.path.insert(0, str(REPOSITORY / "python"))
import swr  # noqa: E402
from swr import _native  # noqa: E402

# bench/results/gemm-sweep-h200/gemm.db.xz as the build tree decompressed it (tests/CMakeLists.txt).
SOURCE_DATABASE = Path(os.environ.get("SWR_TEST_GEMM_DB",
                                      REPOSITORY / "build" / "test-data" / "gemm.db"))


def best_in_sqlite(path, problem_key):
    """(config key, median ms) of the best valid measurement, as the database's own view has it."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        return connection.execute(
            "SELECT c.key, b.median_ms FROM best_measurements b JOIN problems p ON p.id = "
            "b.problem_id JOIN configs c ON c.id = b.config_id JOIN gpus g ON g.id = b.gpu_id "
            "WHERE p.key = ? AND g.name = 'h200'", (problem_key,)).fetchone()


class CatalogTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory()
        cls.database = Path(cls.directory.name) / "gemm.db"
        shutil.copyfile(SOURCE_DATABASE, cls.database)
        cls.catalog = swr.Catalog(cls.database)

    @classmethod
    def tearDownClass(cls):
        cls.catalog.close()
        cls.directory.cleanup()

    def test_a_tuned_gemm_is_answered_exactly_with_the_database_best(self):
        choice = self.catalog.best_gemm("h200", 4096, 4096, 4096, "f16")
        config_key, median_ms = best_in_sqlite(self.database, "m4096_n4096_k4096_f16")
        self.assertEqual(choice["match"], "exact")
        self.assertEqual(choice["distance"], 0)
        self.assertEqual(choice["kernel"]["config_key"], config_key)
        self.assertTrue(math.isclose(choice["kernel"]["measured"]["median_ms"], median_ms))
        self.assertEqual(choice["gpu"], "h200")
        self.assertEqual(choice["source"], f"results database {self.database}")
        self.assertEqual(self.catalog.description, f"results database {self.database}")

    def test_an_untuned_gemm_gets_the_nearest_and_says_how_far(self):
        choice = self.catalog.best_gemm("h200", 4096, 4096, 8192)
        self.assertEqual(choice["match"], "nearest")
        self.assertGreater(choice["distance"], 0)
        config_key, _ = best_in_sqlite(self.database, choice["tuned_shape"])
        self.assertEqual(choice["kernel"]["config_key"], config_key)

    def test_what_nothing_tuned_serves_is_none_with_why(self):
        attention = self.catalog.best_attention("h200", batch=1, heads=8, seq_q=4096,
                                                head_dim=128, dtype="f16", causal=True)
        self.assertEqual(attention["match"], "none")
        self.assertNotIn("kernel", attention)
        self.assertTrue(attention["why"])
        self.assertEqual(self.catalog.best_gemm("h100", 4096, 4096, 4096)["match"], "none")

    def test_bad_input_is_invalid_argument_with_the_message(self):
        with self.assertRaises(swr.InvalidArgument) as raised:
            self.catalog.best_gemm("h200", 4096, 4096, 4096, "f32")
        self.assertEqual(str(raised.exception), "unsupported dtype 'f32': allowed f16, bf16")
        with self.assertRaises(ValueError) as raised:  # InvalidArgument is a ValueError too
            self.catalog.best_attention("h200", 1, 8, 4096, head_dim=48)
        self.assertIn("48", str(raised.exception))
        missing = Path(self.directory.name) / "missing.db"
        with self.assertRaises(swr.InvalidArgument) as raised:
            swr.Catalog(missing)
        self.assertIn(str(missing), str(raised.exception))

    def test_a_run_without_a_device_is_no_device(self):
        with self.assertRaises(swr.NoDevice) as raised:
            self.catalog.run_gemm(1, 2, 3, 4096, 4096, 4096, "f16", stream=0)
        self.assertIn("no CUDA driver/device found", str(raised.exception))
        with self.assertRaises(swr.NoDevice):
            self.catalog.run_attention(1, 2, 3, 4, batch=1, heads=8, seq_q=4096, head_dim=128,
                                       gpu="h200")
        with self.assertRaises(swr.KernelRefused):  # refused before the device is looked for
            self.catalog.run_gemm(1, 2, 0, 4096, 4096, 4096)

    def test_a_closed_catalog_says_so(self):
        catalog = swr.Catalog(self.database)
        catalog.close()
        with self.assertRaises(swr.InvalidArgument):
            catalog.best_gemm("h200", 512, 512, 512)


class LibrarySearchTest(unittest.TestCase):
    def test_the_environment_comes_first_and_a_wrong_path_is_named(self):
        saved = os.environ.get("SWR_RUNTIME_LIBRARY")
        try:
            os.environ["SWR_RUNTIME_LIBRARY"] = "/nonexistent/libswr_runtime.so"
            self.assertEqual(_native.library_candidates()[0], "/nonexistent/libswr_runtime.so")
            with self.assertRaises(OSError) as raised:
                _native.load_library()
            self.assertIn("SWR_RUNTIME_LIBRARY=/nonexistent/libswr_runtime.so", str(raised.exception))
        finally:
            if saved is None:
                os.environ.pop("SWR_RUNTIME_LIBRARY", None)
            else:
                os.environ["SWR_RUNTIME_LIBRARY"] = saved
        candidates = _native.library_candidates()
        package = Path(swr.__file__).resolve().parent
        self.assertIn(str(package / "libswr_runtime.so"), candidates)
        self.assertEqual(candidates[-1], "libswr_runtime.so")
        if "SWR_RUNTIME_LIBRARY" not in os.environ:  # the package's own library first
            self.assertEqual(candidates[0], str(package / "libswr_runtime.so"))

    def test_the_version_is_the_library_one(self):
        self.assertRegex(swr.version(), r"^\d+\.\d+\.\d+$")


if __name__ == "__main__":
    unittest.main()
