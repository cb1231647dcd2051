"""What a tensor call of swr.torch must meet, checked without PyTorch or a GPU (swr/_inputs.py),
the default catalog as the C++ side decides it, and bad catalog paths: each failure one
exception naming the value and what is allowed."""
import os
import sys
import tempfile
import unittest
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
# $SWR_TEST_INSTALLED: test the installed package instead (tests/python/check_install.sh).
if not os.environ.get("SWR_TEST_INSTALLED"):
    sys.path.insert(0, str(REPOSITORY / "python"))
import swr  # noqa: E402
from swr import _inputs  # noqa: E402


class InputRulesTest(unittest.TestCase):
    def test_fallback_is_sdpa_or_error(self):
        _inputs.check_fallback("sdpa")
        _inputs.check_fallback("error")
        with self.assertRaises(ValueError) as raised:
            _inputs.check_fallback("math")
        self.assertEqual(str(raised.exception), "fallback='math': allowed 'sdpa', 'error'")

    def test_dtypes_are_one_of_float16_and_bfloat16(self):
        self.assertEqual(_inputs.catalog_dtype({"q": "float16", "k": "float16"}), "f16")
        self.assertEqual(_inputs.catalog_dtype({"a": "bfloat16", "b": "bfloat16"}), "bf16")
        with self.assertRaises(TypeError) as raised:
            _inputs.catalog_dtype({"q": "float32", "k": "float32", "v": "float32"})
        self.assertEqual(str(raised.exception), "dtype float32: allowed float16, bfloat16")
        with self.assertRaises(TypeError) as raised:
            _inputs.catalog_dtype({"q": "float16", "k": "bfloat16", "v": "float16"})
        self.assertEqual(str(raised.exception), "mismatched dtypes (q float16, k bfloat16, "
                         "v float16): allowed one dtype for all")

    def test_tensors_are_on_one_cuda_device(self):
        _inputs.check_devices({"q": ("cuda", 1), "k": ("cuda", 1)})
        with self.assertRaises(ValueError) as raised:
            _inputs.check_devices({"q": ("cuda", 0), "k": ("cpu", None)})
        self.assertEqual(str(raised.exception), "k is on device cpu: allowed a CUDA tensor")
        with self.assertRaises(ValueError) as raised:
            _inputs.check_devices({"a": ("cuda", 0), "b": ("cuda", 1)})
        self.assertEqual(str(raised.exception),
                         "tensors on different devices (a cuda:0, b cuda:1): allowed one device")

    def test_attention_shapes(self):
        self.assertEqual(_inputs.attention_shape((2, 3, 77, 64), (2, 3, 90, 64), (2, 3, 90, 64)),
                         (2, 3, 77, 90, 64, 3))
        # Grouped-query attention with SDPA's enable_gqa: K/V heads a divisor of Q's.
        self.assertEqual(_inputs.attention_shape((2, 32, 77, 128), (2, 8, 90, 128),
                                                 (2, 8, 90, 128), enable_gqa=True),
                         (2, 32, 77, 90, 128, 8))
        bad = {
            ((2, 77, 64), (2, 3, 77, 64), (2, 3, 77, 64)):
                "q has shape (2, 77, 64): allowed [batch, heads, seq, head_dim] (4 dimensions)",
            ((2, 3, 77, 64), (2, 3, 77, 64), (2, 3, 78, 64)):
                "k shape (2, 3, 77, 64) and v shape (2, 3, 78, 64) differ: allowed the same shape",
            ((2, 4, 77, 64), (2, 2, 77, 64), (2, 2, 77, 64)):
                "q has 4 heads and k 2: allowed the same heads, or enable_gqa=True with k's "
                "heads a divisor of q's",
            ((2, 4, 77, 64), (3, 4, 77, 64), (3, 4, 77, 64)):
                "q shape (2, 4, 77, 64) and k shape (3, 4, 77, 64): allowed the same batch and "
                "head_dim",
            ((2, 3, 0, 64), (2, 3, 7, 64), (2, 3, 7, 64)):
                "empty tensors (q (2, 3, 0, 64), k (2, 3, 7, 64)): allowed sizes of 1 or more",
        }
        for shapes, message in bad.items():
            with self.subTest(shapes=shapes), self.assertRaises(ValueError) as raised:
                _inputs.attention_shape(*shapes)
            self.assertEqual(str(raised.exception), message)

    def test_grouped_heads_must_divide(self):
        with self.assertRaises(ValueError) as raised:
            _inputs.attention_shape((1, 32, 7, 64), (1, 6, 7, 64), (1, 6, 7, 64), enable_gqa=True)
        self.assertEqual(str(raised.exception), "q has 32 heads and k 6: allowed k heads that "
                         "divide q's (grouped-query attention)")

    def test_strides_the_kernels_read_as_they_lie(self):
        shape = (2, 8, 100, 128)
        contiguous = (8 * 100 * 128, 100 * 128, 128, 1)
        bshd = (100 * 8 * 128, 128, 8 * 128, 1)  # a [B, S, H, D] projection transposed
        self.assertEqual(_inputs.kernel_strides(shape, contiguous, 4096), contiguous)
        self.assertEqual(_inputs.kernel_strides(shape, bshd, 4096), bshd)
        # A slice of a fused QKV projection [B, S, 3, H, D]: rows 3*H*D apart.
        self.assertEqual(_inputs.kernel_strides(shape, (100 * 3 * 8 * 128, 128, 3 * 8 * 128, 1),
                                                256), (100 * 3 * 8 * 128, 128, 3 * 8 * 128, 1))
        for strides, pointer in (((8 * 100 * 128, 100 * 128, 128, 2), 4096),  # D stride 2
                                 (bshd, 4098),  # not 16-byte aligned
                                 ((8 * 100 * 132, 100 * 132, 132, 1), 4096),  # 264-byte rows
                                 ((100 * 128, 0, 128, 1), 4096)):  # heads overlap (expanded)
            with self.subTest(strides=strides, pointer=pointer):
                self.assertIsNone(_inputs.kernel_strides(shape, strides, pointer))
        self.assertEqual(_inputs.kernel_strides((1, 1, 5, 64), (7, 3, 64, 1), 0), (7, 3, 64, 1))

    def test_gemm_shapes(self):
        self.assertEqual(_inputs.gemm_shape((1000, 264), (264, 1016)), (1000, 1016, 264))
        with self.assertRaises(ValueError) as raised:
            _inputs.gemm_shape((1000, 264), (256, 1016))
        self.assertEqual(str(raised.exception), "a shape (1000, 264) and b shape (256, 1016): "
                         "allowed [m, k] and [k, n] (2 dimensions, equal k)")

    def test_only_the_kernels_scale_is_theirs(self):
        self.assertIsNone(_inputs.scale_refusal(None, 64))
        self.assertIsNone(_inputs.scale_refusal(0.125, 64))
        self.assertIsNone(_inputs.scale_refusal(1 / 128 ** 0.5, 128))
        self.assertEqual(_inputs.scale_refusal(0.5, 64), "scale=0.5: the kernels apply "
                         "1/sqrt(head_dim) = 0.125 only (allowed: None or that value)")
        for bad in ("0.125", True, float("nan")):
            with self.subTest(scale=bad), self.assertRaises(TypeError) as raised:
                _inputs.scale_refusal(bad, 64)
            self.assertIn(f"scale={bad!r}: allowed None or a finite number", str(raised.exception))


class DefaultCatalogTest(unittest.TestCase):
    def setUp(self):
        self.saved = {name: os.environ.get(name) for name in ("SWR_DB", "XDG_CACHE_HOME")}
        self.directory = tempfile.TemporaryDirectory()

    def tearDown(self):
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self.directory.cleanup()

    def test_swr_db_else_the_user_cache(self):
        os.environ["SWR_DB"] = "/data/tuned.db"
        self.assertEqual(swr.default_catalog_path(), "/data/tuned.db")
        os.environ["SWR_DB"] = ""
        os.environ["XDG_CACHE_HOME"] = self.directory.name
        self.assertEqual(swr.default_catalog_path(),
                         str(Path(self.directory.name) / "swr" / "results.db"))

    def test_a_default_that_is_no_database_is_named_and_left_alone(self):
        not_a_database = Path(self.directory.name) / "notes.txt"
        not_a_database.write_text("not SQLite")
        os.environ["SWR_DB"] = str(not_a_database)
        with self.assertRaises(ValueError) as raised:
            swr.Catalog()
        self.assertIn(str(not_a_database), str(raised.exception))
        self.assertEqual(not_a_database.read_text(), "not SQLite")
        self.assertEqual(sorted(os.listdir(self.directory.name)), ["notes.txt"])

    def test_a_negative_device_ordinal_is_refused(self):
        with self.assertRaises(swr.InvalidArgument) as raised:
            swr.device_gpu_name(-1)
        self.assertEqual(str(raised.exception), "device ordinal -1: allowed 0 or more")

    def test_an_empty_directory_is_no_export(self):
        with self.assertRaises(ValueError) as raised:
            swr.Catalog(self.directory.name)
        self.assertIn(self.directory.name, str(raised.exception))


if __name__ == "__main__":
    unittest.main()
