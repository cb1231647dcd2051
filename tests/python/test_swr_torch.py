"""swr.torch (python/swr/torch.py). Without a GPU: the package imports, registers its ops and
refuses bad tensors before anything runs. On a GPU, with $SWR_TORCH_TEST_CATALOG naming a catalog
tuned there for these shapes (d64 f16 and bf16, causal and not; d64 f16 with 8 query heads over 2
K/V heads; GEMM f16): attention against
SDPA's math path in fp32 (all rows for small S, sampled rows for large S), matmul against
torch.matmul, the fallback policy, torch.compile(fullgraph=True), CUDA-graph capture and replay,
and calls from several threads on several streams. Every swr result is checked to come from swr
(explain says "runs": "swr"), so no fallback can pass for it."""
import os
import sys
import threading
import unittest
import warnings
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
# $SWR_TEST_INSTALLED: test the installed package instead (tests/python/check_install.sh).
if not os.environ.get("SWR_TEST_INSTALLED"):
    sys.path.insert(0, str(REPOSITORY / "python"))
import swr  # noqa: E402

try:
    import torch
except ImportError:
    # $SWR_TEST_REQUIRE_TORCH (check_install.sh, which installs torch): a failure, not a skip.
    if os.environ.get("SWR_TEST_REQUIRE_TORCH"):
        raise
    torch = None

if torch is not None:
    import swr.torch as swr_torch

CATALOG = os.environ.get("SWR_TORCH_TEST_CATALOG")


@unittest.skipIf(torch is None, "torch is not installed")
class TorchBadInputTest(unittest.TestCase):
    def test_the_ops_are_registered_with_their_schema(self):
        self.assertIn("Tensor q, Tensor k, Tensor v, bool is_causal",
                      str(torch.ops.swr.attention.default._schema))
        self.assertIn("Tensor a, Tensor b", str(torch.ops.swr.matmul.default._schema))

    def test_bad_tensors_are_named_before_anything_runs(self):
        q = torch.zeros(2, 3, 16, 64, dtype=torch.float16)
        cases = [
            (ValueError, "q is on device cpu: allowed a CUDA tensor", (q, q, q), {}),
            (TypeError, "dtype float32: allowed float16, bfloat16", (q.float(),) * 3, {}),
            (TypeError, "mismatched dtypes (q float16, k bfloat16, v float16)",
             (q, q.bfloat16(), q), {}),
            (ValueError, "k shape (2, 3, 16, 64) and v shape (2, 3, 16, 32) differ",
             (q, q, q[..., :32]), {}),
            (ValueError, "fallback='never': allowed 'sdpa', 'error'", (q, q, q),
             {"fallback": "never"}),
            (TypeError, "q is a list: allowed a torch.Tensor", ([1.0], q, q), {}),
            (TypeError, "catalog='x.db': allowed None (the default) or a swr.Catalog", (q, q, q),
             {"catalog": "x.db"}),
            (ValueError, "q has 3 heads and k 1: allowed the same heads, or enable_gqa=True",
             (q, q[:, :1], q[:, :1]), {}),
            (ValueError, "q has 3 heads and k 2: allowed k heads that divide q's",
             (q, q[:, :2], q[:, :2]), {"enable_gqa": True}),
        ]
        for error, message, tensors, options in cases:
            with self.subTest(message=message), self.assertRaises(error) as raised:
                swr_torch.attention(*tensors, **options)
            self.assertIn(message, str(raised.exception))
        with self.assertRaises(ValueError) as raised:
            swr_torch.matmul(torch.zeros(4, 8, dtype=torch.float16),
                             torch.zeros(4, 8, dtype=torch.float16))
        self.assertIn("a shape (4, 8) and b shape (4, 8)", str(raised.exception))
        with self.assertRaises(ValueError) as raised:
            swr_torch.matmul(torch.zeros(4, 8, dtype=torch.float16),
                             torch.zeros(8, 4, dtype=torch.float16))
        self.assertIn("a is on device cpu: allowed a CUDA tensor", str(raised.exception))


def gpu_skip_reason():
    if torch is None:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device"
    if not CATALOG:
        return "SWR_TORCH_TEST_CATALOG is not set (a catalog tuned on this GPU)"
    return None


def reference_rows(q, k, v, is_causal, rows):
    """softmax(Q K^T / sqrt(D), top-left causal) V in fp32 for the query rows `rows`."""
    scores = q[:, :, rows].float() @ k.float().transpose(-1, -2) / q.shape[-1] ** 0.5
    if is_causal:
        keys = torch.arange(k.shape[2], device=q.device)
        scores = scores.masked_fill(keys[None, :] > rows[:, None], float("-inf"))
    return torch.softmax(scores, dim=-1) @ v.float()


def math_reference(q, k, v, is_causal, enable_gqa=False):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    gqa = {"enable_gqa": True} if enable_gqa else {}
    with sdpa_kernel(SDPBackend.MATH):
        return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                                is_causal=is_causal, **gqa)


@unittest.skipIf(gpu_skip_reason() is not None, gpu_skip_reason() or "")
class TorchGpuTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.catalog = swr.Catalog(CATALOG)
        torch.manual_seed(0)

    def inputs(self, batch, heads, seq_q, seq_kv, dtype, head_dim=64):
        make = lambda seq: torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=dtype)
        return make(seq_q), make(seq_kv), make(seq_kv)

    def assert_runs_swr(self, *tensors, **options):
        answer = swr_torch.explain(*tensors, catalog=self.catalog, **options)
        self.assertEqual(answer["runs"], "swr", answer)
        return answer

    def test_attention_matches_sdpa_math_on_odd_shapes(self):
        shapes = [(2, 3, 77, 77, torch.float16, False), (2, 3, 130, 130, torch.float16, True),
                  (3, 2, 100, 333, torch.bfloat16, False), (1, 2, 257, 257, torch.bfloat16, True),
                  (2, 4, 3000, 3000, torch.float16, True)]
        for batch, heads, seq_q, seq_kv, dtype, causal in shapes:
            with self.subTest(shape=(batch, heads, seq_q, seq_kv, dtype, causal)):
                q, k, v = self.inputs(batch, heads, seq_q, seq_kv, dtype)
                self.assert_runs_swr(q, k, v, is_causal=causal)
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # a fallback would warn
                    out = swr_torch.attention(q, k, v, is_causal=causal, catalog=self.catalog)
                self.assertEqual(out.shape, q.shape)
                self.assertEqual(out.dtype, dtype)
                tolerance = 2e-2 if dtype == torch.bfloat16 else 4e-3
                if seq_q <= 512:
                    expected = math_reference(q, k, v, causal)
                    torch.testing.assert_close(out.float(), expected, atol=tolerance, rtol=0)
                else:
                    rows = torch.cat([torch.arange(0, 3), torch.randint(3, seq_q - 3, (61,)),
                                      torch.arange(seq_q - 3, seq_q)]).cuda()
                    torch.testing.assert_close(out[:, :, rows].float(),
                                               reference_rows(q, k, v, causal, rows),
                                               atol=tolerance, rtol=0)

    def test_strided_views_run_as_they_lie_and_others_are_copied(self):
        layout = torch.randn(2, 77, 3, 64, device="cuda", dtype=torch.float16)  # [B, S, H, D]
        q = k = v = layout.transpose(1, 2)
        self.assertFalse(q.is_contiguous())
        self.assertFalse(self.assert_runs_swr(q, k, v)["copies_inputs"])
        out = swr_torch.attention(q, k, v, catalog=self.catalog, fallback="error")
        torch.testing.assert_close(out.float(), math_reference(q, k, v, False), atol=4e-3, rtol=0)
        # Rows that do not start on 16 bytes (an odd column offset) are copied first.
        wide = torch.randn(2, 3, 77, 72, device="cuda", dtype=torch.float16)
        odd = wide[..., 1:65]
        self.assertTrue(self.assert_runs_swr(odd, odd, odd)["copies_inputs"])
        out = swr_torch.attention(odd, odd, odd, catalog=self.catalog, fallback="error")
        torch.testing.assert_close(out.float(), math_reference(odd, odd, odd, False), atol=4e-3,
                                   rtol=0)

    def test_grouped_query_attention_with_enable_gqa(self):
        for causal, strided in ((False, False), (True, False), (True, True)):
            with self.subTest(causal=causal, strided=strided):
                q, _, _ = self.inputs(2, 8, 300, 300, torch.float16)
                if strided:  # K and V as [B, S, H_kv, D] projections seen as [B, H_kv, S, D]
                    k = torch.randn(2, 300, 2, 64, device="cuda", dtype=torch.float16)
                    v = torch.randn_like(k)
                    k, v = k.transpose(1, 2), v.transpose(1, 2)
                else:
                    k = torch.randn(2, 2, 300, 64, device="cuda", dtype=torch.float16)
                    v = torch.randn_like(k)
                answer = self.assert_runs_swr(q, k, v, is_causal=causal, enable_gqa=True)
                self.assertFalse(answer["copies_inputs"])
                out = swr_torch.attention(q, k, v, is_causal=causal, enable_gqa=True,
                                          catalog=self.catalog, fallback="error")
                torch.testing.assert_close(out.float(), math_reference(q, k, v, causal, True),
                                           atol=4e-3, rtol=0)

    def test_a_call_after_its_catalog_closed_is_refused_not_a_crash(self):
        catalog = swr.Catalog(CATALOG)
        q, k, v = self.inputs(2, 3, 77, 77, torch.float16)
        first = swr_torch.attention(q, k, v, catalog=catalog, fallback="error")  # prepared here
        torch.testing.assert_close(first.float(), math_reference(q, k, v, False), atol=4e-3,
                                   rtol=0)
        catalog.close()
        with self.assertRaises(swr.InvalidArgument) as raised:
            swr_torch.attention(q, k, v, catalog=catalog, fallback="error")
        self.assertIn("the catalog is closed", str(raised.exception))

    def test_matmul_matches_torch(self):
        for m, n, k in [(1000, 1016, 264), (777, 1024, 512)]:
            with self.subTest(shape=(m, n, k)):
                a = torch.randn(m, k, device="cuda", dtype=torch.float16)
                b = torch.randn(k, n, device="cuda", dtype=torch.float16)
                self.assertEqual(swr_torch.explain_matmul(a, b, catalog=self.catalog)["runs"],
                                 "swr")
                c = swr_torch.matmul(a, b, catalog=self.catalog)
                torch.testing.assert_close(c.float(), a.float() @ b.float(), atol=0.25, rtol=2e-3)

    def test_the_fallback_policy(self):
        q, k, v = self.inputs(1, 2, 100, 100, torch.float16, head_dim=128)  # d128 f16: untuned
        self.assertEqual(swr_torch.explain(q, k, v, catalog=self.catalog)["runs"], "fallback")
        with self.assertRaises(swr.KernelRefused) as raised:
            swr_torch.attention(q, k, v, catalog=self.catalog, fallback="error")
        self.assertIn("B=1 H=2 Sq=100 Skv=100 D=128 f16", str(raised.exception))
        with self.assertWarns(RuntimeWarning) as warned:
            out = swr_torch.attention(q, k, v, catalog=self.catalog)
        self.assertIn("B=1 H=2 Sq=100 Skv=100 D=128 f16", str(warned.warning))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # once per shape
            again = swr_torch.attention(q, k, v, catalog=self.catalog)
        torch.testing.assert_close(out, again)
        torch.testing.assert_close(out.float(), math_reference(q, k, v, False), atol=4e-3, rtol=0)
        # A scale the kernels do not apply: PyTorch's operator with that scale, or refused.
        q, k, v = self.inputs(1, 2, 100, 100, torch.float16)
        with self.assertRaises(swr.KernelRefused) as raised:
            swr_torch.attention(q, k, v, scale=0.5, catalog=self.catalog, fallback="error")
        self.assertIn("scale=0.5", str(raised.exception))
        with self.assertWarns(RuntimeWarning):
            scaled = swr_torch.attention(q, k, v, scale=0.5, catalog=self.catalog)
        torch.testing.assert_close(
            scaled, torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=0.5))

    def test_an_unsupported_head_dim_is_a_value_error_naming_it(self):
        q, k, v = self.inputs(1, 2, 64, 64, torch.float16, head_dim=48)
        with self.assertRaises(ValueError) as raised:
            swr_torch.attention(q, k, v, catalog=self.catalog)
        self.assertIn("48", str(raised.exception))

    def test_torch_compile_fullgraph_keeps_the_ops(self):
        catalog = self.catalog

        class Block(torch.nn.Module):
            def forward(self, q, k, v, w):
                out = swr_torch.attention(q, k, v, is_causal=True, catalog=catalog)
                flat = out.transpose(1, 2).reshape(-1, out.shape[1] * out.shape[3])
                return swr_torch.matmul(flat, w, catalog=catalog)

        q, k, v = self.inputs(2, 4, 128, 128, torch.float16)
        w = torch.randn(256, 512, device="cuda", dtype=torch.float16)
        eager = Block()(q, k, v, w)
        compiled = torch.compile(Block(), fullgraph=True)(q, k, v, w)
        torch.testing.assert_close(compiled, eager)

    def test_cuda_graph_capture_and_replay(self):
        q, k, v = self.inputs(2, 3, 200, 200, torch.float16)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            swr_torch.attention(q, k, v, is_causal=True, catalog=self.catalog)  # warm up
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = swr_torch.attention(q, k, v, is_causal=True, catalog=self.catalog)
        for _ in range(2):
            fresh_q, fresh_k, fresh_v = self.inputs(2, 3, 200, 200, torch.float16)
            q.copy_(fresh_q), k.copy_(fresh_k), v.copy_(fresh_v)
            graph.replay()
            torch.cuda.synchronize()
            torch.testing.assert_close(out.float(), math_reference(q, k, v, True), atol=4e-3,
                                       rtol=0)

    def test_a_launch_captured_with_swrs_own_counter_replays_right_beside_eager_calls(self):
        # The C ABI's tile counter for workspace 0 (a dynamic-persistence kernel, more tiles than
        # CTAs): eager launches take counters from the stream's pool, never cleared per launch; a
        # launch captured into a graph gets the capture stream's counter instead, cleared in the
        # graph, so every replay does all its tiles while eager calls go on using the pool.
        q, k, v = self.inputs(16, 8, 777, 777, torch.float16)
        answer = self.assert_runs_swr(q, k, v)
        if "-dynamic-" not in answer["variant"]:
            self.skipTest(f"the catalog's kernel for B=16 H=8 S=777 is {answer['variant']}, "
                          "not a dynamic-persistence one")
        launch = self.catalog.attention_launch(16, 8, 777, 64, "f16", gpu=answer["gpu"])
        out = torch.empty_like(q)
        capture = torch.cuda.Stream()
        capture.wait_stream(torch.cuda.current_stream())
        pointers = (q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), 0, 0)
        launch(*pointers, stream=capture.cuda_stream)  # the stream's counters, allocated now
        torch.cuda.current_stream().wait_stream(capture)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=capture):
            launch(*pointers, stream=capture.cuda_stream)
        rows = torch.cat([torch.arange(0, 3), torch.randint(3, 774, (29,)),
                          torch.arange(774, 777)]).cuda()
        expected = reference_rows(q, k, v, False, rows)
        for _ in range(3):
            eager = [swr_torch.attention(q, k, v, catalog=self.catalog) for _ in range(5)]
            out.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            torch.testing.assert_close(out[:, :, rows].float(), expected, atol=4e-3, rtol=0)
            for result in eager:
                torch.testing.assert_close(result, out, atol=0, rtol=0)

    def test_the_hot_path_asked_for_runs_and_both_give_the_same_output(self):
        asked = os.environ.get("SWR_HOT_PATH")  # the device run tests with each
        if asked:
            self.assertEqual(swr_torch.hot_path, asked)
        paths = ["python"] + (["compiled"] if swr._hotpath.compiled() is not None else [])
        q, k, v = self.inputs(2, 3, 130, 130, torch.float16)
        a = torch.randn(777, 512, device="cuda", dtype=torch.float16)
        b = torch.randn(512, 1024, device="cuda", dtype=torch.float16)
        results, default = {}, swr_torch.hot_path
        try:
            for path in paths:
                self.assertEqual(swr_torch._use_hot_path(path).kind, path)
                results[path] = [
                    swr_torch.attention(q, k, v, is_causal=True, catalog=self.catalog,
                                        fallback="error"),
                    swr_torch.attention(q.transpose(1, 2).contiguous().transpose(1, 2), k, v,
                                        is_causal=True, catalog=self.catalog, fallback="error"),
                    swr_torch.matmul(a, b, catalog=self.catalog, fallback="error")]
        finally:
            swr_torch._use_hot_path(default)
        expected = math_reference(q, k, v, True)
        for path, (out, copied, c) in results.items():
            with self.subTest(path=path):
                torch.testing.assert_close(out.float(), expected, atol=4e-3, rtol=0)
                torch.testing.assert_close(copied, out, atol=0, rtol=0)
                torch.testing.assert_close(c, results["python"][2], atol=0, rtol=0)
                torch.testing.assert_close(out, results["python"][0], atol=0, rtol=0)

    def test_threads_on_their_own_streams(self):
        inputs = [self.inputs(2, 2, 300, 300, torch.float16) for _ in range(4)]
        expected = [swr_torch.attention(*tensors, catalog=self.catalog) for tensors in inputs]
        torch.cuda.synchronize()
        results, errors = [None] * 4, []

        def work(index):
            try:
                stream = torch.cuda.Stream()
                with torch.cuda.stream(stream):
                    for _ in range(20):
                        out = swr_torch.attention(*inputs[index], catalog=self.catalog)
                stream.synchronize()
                results[index] = out
            except Exception as error:  # reported below, with the thread's index
                errors.append((index, error))

        threads = [threading.Thread(target=work, args=(index,)) for index in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(errors, [])
        for got, want in zip(results, expected):
            torch.testing.assert_close(got, want, atol=0, rtol=0)


if __name__ == "__main__":
    unittest.main()
