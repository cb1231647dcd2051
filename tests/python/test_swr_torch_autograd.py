"""swr.torch under autograd, without a GPU: a call that autograd records is never detached. The
device and dtype checks are opened to CPU float64 tensors (the seams below), so that the Python
glue itself runs here: the fallback decision with inputs that require grad, gradients checked
with torch.autograd.gradcheck through it, the refusal under fallback="error", the matmul op's
registered backward, and calls without grad that never take the grad path."""
import os
import sys
import unittest
import warnings
from pathlib import Path
from unittest import mock

REPOSITORY = Path(__file__).resolve().parents[2]
if not os.environ.get("SWR_TEST_INSTALLED"):
    sys.path.insert(0, str(REPOSITORY / "python"))
import swr  # noqa: E402

try:
    import torch
except ImportError:
    if os.environ.get("SWR_TEST_REQUIRE_TORCH"):
        raise
    torch = None

if torch is not None:
    import swr.torch as swr_torch


def cpu_float64_allowed():
    """Patches that let CPU float64 tensors past the device and dtype checks (named "f16" for
    the catalog), so that gradcheck can run the glue here."""
    inputs = swr_torch._inputs
    real_dtype = inputs.catalog_dtype

    def any_dtype(dtypes):
        if set(dtypes.values()) == {"float64"}:
            return "f16"
        return real_dtype(dtypes)

    return [mock.patch.object(inputs, "check_devices", lambda devices: None),
            mock.patch.object(inputs, "catalog_dtype", any_dtype)]


def untuned_plan(number, device, family, problem, scale):
    """A plan as swr.torch decides it for a shape the catalog has nothing tuned for."""
    described = swr_torch._inputs.shape_text(*problem)
    if family != "attention":
        described = "the backward of " + described
    why = f"no tuned kernel for {described} on h200: nothing tuned with head dim 4"
    return swr_torch._Plan(None, {"match": "none", "gpu": "h200", "source": "test", "why": why},
                           why, False, device)


@unittest.skipIf(torch is None, "torch is not installed")
class AttentionUnderAutogradTest(unittest.TestCase):
    def setUp(self):
        for patch in cpu_float64_allowed():
            patch.start()
            self.addCleanup(patch.stop)
        # A forward-only launch must never run for a call autograd records.
        forward_only = mock.patch.object(swr_torch, "_eager_attention",
                                         side_effect=AssertionError("forward-only path taken"))
        self.forward_only = forward_only.start()
        self.addCleanup(forward_only.stop)
        # No catalog here: every plan is the one of a shape nothing tuned serves.
        untuned = mock.patch.object(swr_torch, "_decided_plan", side_effect=untuned_plan)
        untuned.start()
        self.addCleanup(untuned.stop)
        swr_torch._warned.clear()
        swr_torch._training_calls.clear()  # decided under other tests' plans
        torch.manual_seed(0)

    def inputs(self, batch=1, heads=2, seq_q=5, seq_kv=7, head_dim=4, kv_heads=None):
        make = lambda h, s: torch.randn(batch, h, s, head_dim, dtype=torch.float64,
                                        requires_grad=True)
        return make(heads, seq_q), make(kv_heads or heads, seq_kv), make(kv_heads or heads, seq_kv)

    def test_the_result_carries_a_graph_and_gradients_reach_every_input(self):
        q, k, v = self.inputs()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = swr_torch.attention(q, k, v, is_causal=True)
        self.assertTrue(out.requires_grad)
        self.assertIsNotNone(out.grad_fn)
        out.sum().backward()
        for name, tensor in (("q", q), ("k", k), ("v", v)):
            with self.subTest(tensor=name):
                self.assertIsNotNone(tensor.grad)
                self.assertGreater(tensor.grad.abs().sum().item(), 0)

    def test_gradients_pass_gradcheck_causal_and_not_with_gqa(self):
        cases = [dict(is_causal=False), dict(is_causal=True),
                 dict(is_causal=True, enable_gqa=True)]
        for options in cases:
            with self.subTest(**options):
                kv_heads = 1 if options.get("enable_gqa") else None
                q, k, v = self.inputs(batch=2, heads=2, seq_q=3, seq_kv=5, kv_heads=kv_heads)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self.assertTrue(torch.autograd.gradcheck(
                        lambda q, k, v: swr_torch.attention(q, k, v, **options), (q, k, v)))

    def test_only_one_input_requiring_grad_is_enough(self):
        q, k, v = (t.detach() for t in self.inputs())
        v.requires_grad_(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = swr_torch.attention(q, k, v)
        out.sum().backward()
        self.assertIsNotNone(v.grad)

    def test_the_fallback_warns_once_per_shape_naming_it(self):
        q, k, v = self.inputs()
        with self.assertWarns(RuntimeWarning) as warned:
            swr_torch.attention(q, k, v, is_causal=True)
        self.assertIn("B=1 H=2 Sq=5 Skv=7 D=4 f16 causal", str(warned.warning))
        self.assertIn("require grad", str(warned.warning))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            swr_torch.attention(q, k, v, is_causal=True)

    def test_fallback_error_refuses_naming_why(self):
        q, k, v = self.inputs()
        with self.assertRaises(swr.KernelRefused) as raised:
            swr_torch.attention(q, k, v, fallback="error")
        self.assertIn("B=1 H=2 Sq=5 Skv=7 D=4 f16", str(raised.exception))
        self.assertIn("inputs require grad", str(raised.exception))

    def test_bad_input_is_still_named_first(self):
        q, k, v = self.inputs()
        with self.assertRaises(ValueError) as raised:
            swr_torch.attention(q, k, v[..., :2])
        self.assertIn("differ", str(raised.exception))

    def test_without_grad_the_forward_only_path_runs(self):
        q, k, v = self.inputs()
        for context in (torch.no_grad, torch.inference_mode):
            with self.subTest(context=context.__name__):
                self.forward_only.reset_mock(side_effect=True)
                self.forward_only.return_value = "forward"
                with context():
                    self.assertEqual(swr_torch.attention(q, k, v), "forward")
                self.forward_only.assert_called_once()
        self.forward_only.reset_mock()
        self.assertEqual(swr_torch.attention(*(t.detach() for t in (q, k, v))), "forward")


@unittest.skipIf(torch is None, "torch is not installed")
class MatmulUnderAutogradTest(unittest.TestCase):
    def setUp(self):
        for patch in cpu_float64_allowed():
            patch.start()
            self.addCleanup(patch.stop)
        # The launch itself (hot path or fallback) as torch.matmul: the registered autograd and
        # the backward's products are what is under test.
        self.launches = []

        def launch(a, b, fallback, catalog):
            self.launches.append((tuple(a.shape), tuple(b.shape), a.requires_grad))
            return torch.matmul(a, b)

        patch = mock.patch.object(swr_torch, "_eager_matmul", side_effect=launch)
        patch.start()
        self.addCleanup(patch.stop)
        torch.manual_seed(0)

    def test_the_op_has_a_backward_and_gradcheck_passes(self):
        a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
        b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
        c = swr_torch.matmul(a, b)
        self.assertIsNotNone(c.grad_fn)
        self.assertTrue(torch.autograd.gradcheck(lambda a, b: swr_torch.matmul(a, b), (a, b)))

    def test_the_backward_runs_one_product_per_input_that_requires_grad(self):
        a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
        b = torch.randn(4, 5, dtype=torch.float64)
        c = swr_torch.matmul(a, b)
        self.launches.clear()
        c.sum().backward()
        # dA = dC [3 x 5] times B^T [5 x 4]; no dB.
        self.assertEqual(self.launches, [((3, 5), (5, 4), False)])
        torch.testing.assert_close(a.grad, torch.ones(3, 5, dtype=torch.float64) @ b.t())
        self.assertIsNone(b.grad)


if __name__ == "__main__":
    unittest.main()
