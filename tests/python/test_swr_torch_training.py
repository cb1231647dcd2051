"""swr.torch's training path without a GPU: the op pair torch.ops.swr.attention_train (out and the
log-sum-exp) and torch.ops.swr.attention_backward, with its registered autograd, run on CPU
float64 tensors against stand-in kernels. The stand-ins read and write the very memory the glue
hands the C API (pointers and element strides), compute attention and its gradients in float64,
and check that the backward is given the forward's own log-sum-exp; so gradcheck through them
tests the glue: which pointers, which strides, which workspace, which plans. Also: the plans the
glue asks for (any or deterministic dQ), the fallback of the whole op when swr serves either
pass not, and the ops' fake kernels."""
import contextlib
import ctypes
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
    from torch._subclasses.fake_tensor import FakeTensorMode


def memory(pointer, shape, strides, dtype):
    """The tensor of `shape` and element `strides` at device pointer `pointer` (here: host
    memory), sharing it."""
    extent = 1 + sum((size - 1) * stride for size, stride in zip(shape, strides))
    element = ctypes.c_double if dtype == torch.float64 else ctypes.c_float
    flat = torch.frombuffer((element * extent).from_address(pointer), dtype=dtype)
    return flat.as_strided(tuple(shape), tuple(strides))


def reference(q, k, v, causal):
    """(out, lse) in float64, with K/V heads repeated for grouped-query attention."""
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if causal:
        mask = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, -1) @ v, torch.logsumexp(scores, -1)


def reference_gradients(q, k, v, d_o, causal):
    """(dq, dk, dv) of reference() by the backward's own formulas (the op runs below autograd,
    so the stand-in cannot ask autograd): dS = P (dP - rowsum(dO O)), dK, dV summed over a K/V
    head's query heads."""
    group = q.shape[1] // k.shape[1]
    k_rep, v_rep = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    scale = q.shape[-1] ** -0.5
    scores = q @ k_rep.transpose(-1, -2) * scale
    if causal:
        mask = torch.ones(q.shape[2], k.shape[2], dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    p = torch.softmax(scores, -1)
    out = p @ v_rep
    d_p = d_o @ v_rep.transpose(-1, -2)
    d_s = p * (d_p - (d_o * out).sum(-1, keepdim=True))
    dq = d_s @ k_rep * scale
    dk = (d_s.transpose(-1, -2) @ q * scale)
    dv = p.transpose(-1, -2) @ d_o
    fold = lambda t: t.view(t.shape[0], k.shape[1], group, *t.shape[2:]).sum(2)
    return dq, fold(dk), fold(dv)


class StandInForward:
    """Launch.call_with_lse: writes out and lse where the glue says they are."""

    def __init__(self, shapes, causal):
        self.shapes, self.causal, self.calls = shapes, causal, []

    def call_with_lse(self, q, k, v, o, lse, strides, workspace, flags, stream):
        shapes = self.shapes
        tensors = [memory(pointer, shapes[name], getattr(strides, name), torch.float64)
                   for pointer, name in ((q, "q"), (k, "k"), (v, "v"))]
        out, rows = reference(*tensors, self.causal)
        memory(o, shapes["q"], strides.o, torch.float64).copy_(out)
        memory(lse, shapes["lse"], torch.empty(shapes["lse"]).stride(), torch.float32).copy_(rows)
        self.calls.append({"strides": {name: tuple(getattr(strides, name))
                                       for name in ("q", "k", "v", "o")}})


class StandInBackward:
    """BackwardLaunch: dq, dk, dv where the glue says they are, from the inputs it passes; fails
    when the lse it is given is not the forward's."""
    workspace_bytes = 4096

    def __init__(self, shapes, causal):
        self.shapes, self.causal, self.calls = shapes, causal, []

    def __call__(self, q, k, v, o, d_o, lse, dq, dk, dv, workspace=0, strides=None, stream=0,
                 workspace_bytes=None):
        shapes = self.shapes
        role = {"q": "q", "k": "k", "v": "v", "o": "q", "d_o": "q", "dq": "q", "dk": "k",
                "dv": "k"}
        view = {name: memory(pointer, shapes[role[name]], getattr(strides, name), torch.float64)
                for name, pointer in (("q", q), ("k", k), ("v", v), ("o", o), ("d_o", d_o),
                                      ("dq", dq), ("dk", dk), ("dv", dv))}
        inputs = [view[name] for name in ("q", "k", "v")]
        _, rows = reference(*inputs, self.causal)
        given_lse = memory(lse, shapes["lse"], torch.empty(shapes["lse"]).stride(), torch.float32)
        torch.testing.assert_close(given_lse.double(), rows, rtol=1e-5, atol=1e-5)
        grads = reference_gradients(*inputs, view["d_o"], self.causal)
        for name, grad in zip(("dq", "dk", "dv"), grads):
            view[name].copy_(grad)
        self.calls.append({"workspace_bytes": (self.workspace_bytes if workspace_bytes is None
                                               else workspace_bytes),
                           "workspace": workspace})


def plan(launch):
    return swr_torch._Plan(launch, {"match": "exact", "gpu": "h200", "source": "stand-in",
                                    "distance": 0, "tuned_shape": "t",
                                    "kernel": {"config_key": "stand-in", "measured": {}}},
                           None, False, None)


def refused(why):
    return swr_torch._Plan(None, {"match": "none", "gpu": "h200", "source": "stand-in",
                                  "why": why}, why, False, None)


@unittest.skipIf(torch is None, "torch is not installed")
class TrainingThroughSwrTest(unittest.TestCase):
    def setUp(self):
        inputs = swr_torch._inputs
        real_dtype = inputs.catalog_dtype
        patches = [
            mock.patch.object(inputs, "check_devices", lambda devices: None),
            mock.patch.object(inputs, "catalog_dtype",
                              lambda d: "f16" if set(d.values()) == {"float64"} else real_dtype(d)),
            # 16-byte alignment holds for these float64 strides too; the stream is a number.
            mock.patch.object(swr_torch, "_raw_stream", lambda index: 0),
            mock.patch.object(swr_torch, "_on_launch_device",
                              lambda index: contextlib.nullcontext()),
            mock.patch.object(swr_torch, "_decided_plan", side_effect=self.decided_plan),
            mock.patch.object(swr_torch, "_eager_attention",
                              side_effect=AssertionError("forward-only path taken")),
        ]
        for patch in patches:
            patch.start()
            self.addCleanup(patch.stop)
        swr_torch._warned.clear()
        swr_torch._training_calls.clear()  # the eager calls decided by other tests' stand-ins
        self.asked = []
        self.forward = self.backward = None
        self.backward_plan = None
        torch.manual_seed(0)

    def decided_plan(self, number, device, family, problem, scale):
        self.asked.append(family)
        if family == "attention":
            return plan(self.forward)
        return self.backward_plan or plan(self.backward)

    def stand_ins(self, q, k, causal):
        shapes = {"q": tuple(q.shape), "k": tuple(k.shape), "v": tuple(k.shape),
                  "lse": tuple(q.shape[:3])}
        self.forward = StandInForward(shapes, causal)
        self.backward = StandInBackward(shapes, causal)

    def inputs(self, batch=2, heads=2, seq=8, head_dim=8, kv_heads=None):
        # seq and head_dim multiples of 8 elements: strides the kernels take as they lie.
        make = lambda h: torch.randn(batch, h, seq, head_dim, dtype=torch.float64,
                                     requires_grad=True)
        return make(heads), make(kv_heads or heads), make(kv_heads or heads)

    def test_gradcheck_through_the_swr_ops_causal_and_not_and_gqa(self):
        for options in (dict(is_causal=False), dict(is_causal=True),
                        dict(is_causal=True, enable_gqa=True)):
            with self.subTest(**options):
                q, k, v = self.inputs(kv_heads=1 if options.get("enable_gqa") else None)
                self.stand_ins(q, k, options["is_causal"])
                self.assertTrue(torch.autograd.gradcheck(
                    lambda q, k, v: swr_torch.attention(q, k, v, **options), (q, k, v)))
                self.assertTrue(self.forward.calls)
                self.assertTrue(self.backward.calls)
                self.assertEqual(self.backward.calls[0]["workspace_bytes"], 4096)
                self.assertNotEqual(self.backward.calls[0]["workspace"], 0)

    def test_the_result_has_swrs_training_grad_fn(self):
        # Eagerly the autograd function (the ops are for torch.compile: see the fullgraph test).
        q, k, v = self.inputs()
        self.stand_ins(q, k, True)
        out = swr_torch.attention(q, k, v, is_causal=True)
        self.assertIs(out.grad_fn._forward_cls, swr_torch._AttentionTraining)
        out.sum().backward()
        self.assertEqual(len(self.backward.calls), 1)
        self.assertIn("attention-backward", self.asked)
        self.assertNotIn("attention-backward-deterministic", self.asked)

    def test_strided_views_are_passed_with_their_strides(self):
        # [B, S, H, D] projections seen as [B, H, S, D]: read as they lie, not copied.
        make = lambda: torch.randn(2, 8, 2, 8, dtype=torch.float64).transpose(1, 2) \
            .requires_grad_(True)
        q, k, v = make(), make(), make()
        self.stand_ins(q, k, False)
        self.assertTrue(torch.autograd.gradcheck(swr_torch.attention, (q, k, v)))
        self.assertEqual(self.forward.calls[0]["strides"]["q"], q.stride())

    def test_deterministic_algorithms_ask_for_a_deterministic_backward(self):
        q, k, v = self.inputs()
        self.stand_ins(q, k, False)
        torch.use_deterministic_algorithms(True)
        self.addCleanup(torch.use_deterministic_algorithms, False)
        swr_torch.attention(q, k, v).sum().backward()
        self.assertIn("attention-backward-deterministic", self.asked)
        self.assertNotIn("attention-backward", self.asked)

    def test_a_backward_swr_cannot_serve_falls_back_for_the_whole_op(self):
        q, k, v = self.inputs()
        self.stand_ins(q, k, True)
        self.backward_plan = refused("no tuned kernel for the backward of B=2")
        with self.assertWarns(RuntimeWarning) as warned:
            out = swr_torch.attention(q, k, v, is_causal=True)
        self.assertIn("the backward of B=2", str(warned.warning))
        out.sum().backward()
        self.assertEqual(self.forward.calls, [])  # PyTorch's forward, not swr's
        self.assertEqual(self.backward.calls, [])
        expected = torch.autograd.grad(reference(q, k, v, True)[0].sum(), (q, k, v))
        for got, want in zip((q.grad, k.grad, v.grad), expected):
            torch.testing.assert_close(got, want)

    def test_fallback_error_refuses_before_anything_runs(self):
        q, k, v = self.inputs()
        self.stand_ins(q, k, False)
        self.backward_plan = refused("no deterministic variant")
        with self.assertRaises(swr.KernelRefused) as raised:
            swr_torch.attention(q, k, v, fallback="error")
        self.assertIn("inputs require grad", str(raised.exception))
        self.assertEqual(self.forward.calls, [])

    def test_torch_compile_fullgraph_keeps_both_ops_in_the_graphs(self):
        q, k, v = self.inputs()
        self.stand_ins(q, k, True)
        graphs = []

        def backend(graph, example_inputs):
            from torch._functorch.aot_autograd import aot_module_simplified

            def keep(graph, inputs):
                graphs.append(str(graph.graph))
                return graph

            return aot_module_simplified(graph, example_inputs, fw_compiler=keep, bw_compiler=keep)

        def step(q, k, v):
            return swr_torch.attention(q, k, v, is_causal=True).square().sum()

        compiled = torch.compile(step, backend=backend, fullgraph=True)
        loss = compiled(q, k, v)
        loss.backward()
        expected = [t.grad.clone() for t in (q, k, v)]
        for t in (q, k, v):
            t.grad = None
        step(q, k, v).backward()
        for got, want in zip(expected, (q.grad, k.grad, v.grad)):
            torch.testing.assert_close(got, want)
        self.assertEqual(len(graphs), 2)  # forward and backward
        self.assertIn("swr.attention_train", graphs[0])
        self.assertIn("swr.attention_backward", graphs[1])

    def test_no_grad_runs_the_forward_only_path(self):
        q, k, v = self.inputs()
        self.stand_ins(q, k, False)
        with mock.patch.object(swr_torch, "_eager_attention", return_value="forward only"):
            with torch.no_grad():
                self.assertEqual(swr_torch.attention(q, k, v), "forward only")
        self.assertEqual(self.forward.calls, [])


@unittest.skipIf(torch is None, "torch is not installed")
class TrainingOpsSchemaTest(unittest.TestCase):
    def test_the_ops_are_registered_with_their_schema(self):
        self.assertIn("bool deterministic) -> (Tensor, Tensor)",
                      str(torch.ops.swr.attention_train.default._schema))
        self.assertIn("Tensor grad, Tensor q, Tensor k, Tensor v, Tensor out, Tensor lse",
                      str(torch.ops.swr.attention_backward.default._schema))

    def test_the_fake_kernels_give_the_shapes_without_running_anything(self):
        with FakeTensorMode():
            q = torch.empty(2, 8, 100, 64, dtype=torch.bfloat16, device="cuda")
            k = torch.empty(2, 2, 130, 64, dtype=torch.bfloat16, device="cuda")
            out, lse = torch.ops.swr.attention_train(q, k, k, True, None, "sdpa", 0, True, False)
            self.assertEqual((tuple(out.shape), out.dtype), ((2, 8, 100, 64), torch.bfloat16))
            self.assertEqual((tuple(lse.shape), lse.dtype), ((2, 8, 100), torch.float32))
            dq, dk, dv = torch.ops.swr.attention_backward(out, q, k, k, out, lse, True, None,
                                                          "sdpa", 0, True, False)
            self.assertEqual(tuple(dq.shape), (2, 8, 100, 64))
            self.assertEqual(tuple(dk.shape), (2, 2, 130, 64))
            self.assertEqual(tuple(dv.shape), (2, 2, 130, 64))
            with self.assertRaises(ValueError):  # bad input is named in the fake kernel too
                torch.ops.swr.attention_train(q, k[..., :32], k, True, None, "sdpa", 0, True,
                                              False)


CATALOG = os.environ.get("SWR_TORCH_TEST_CATALOG")


def gpu_skip_reason():
    if torch is None:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device"
    if not CATALOG:
        return ("SWR_TORCH_TEST_CATALOG is not set (a catalog with forward and backward tuned on "
                "this GPU: bench/training_device_run.sh)")
    return None


def math_gradients(q, k, v, grad, causal, enable_gqa=False):
    """(dq, dk, dv) of SDPA's math path in fp32 on the same 16-bit inputs."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    inputs = [t.detach().float().requires_grad_(True) for t in (q, k, v)]
    gqa = {"enable_gqa": True} if enable_gqa else {}
    with sdpa_kernel(SDPBackend.MATH):
        out = torch.nn.functional.scaled_dot_product_attention(*inputs, is_causal=causal, **gqa)
    return torch.autograd.grad(out, inputs, grad.float())


def relative_error(got, expected):
    return ((got.float() - expected).abs().max() / expected.abs().max()).item()


@unittest.skipIf(gpu_skip_reason() is not None, gpu_skip_reason() or "")
class TrainingOnGpuTest(unittest.TestCase):
    # The worst gradient error against fp32 math, relative to the largest gradient: the dtype's
    # rounding of P and dS (bf16 keeps 8 bits, f16 11).
    BOUND = {"torch.float16": 4e-3, "torch.bfloat16": 3e-2}

    @classmethod
    def setUpClass(cls):
        cls.catalog = swr.Catalog(CATALOG)
        torch.manual_seed(0)

    def leaf(self, *shape, dtype=None):
        dtype = dtype or torch.float16
        return torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=True)

    def assert_trains_through_swr(self, q, k, v, **options):
        answer = swr_torch.explain(q, k, v, catalog=self.catalog, **options)
        self.assertEqual(answer["runs"], "swr", answer)
        self.assertEqual(answer["backward"]["runs"], "swr", answer["backward"])
        return answer

    def check_gradients(self, q, k, v, causal=False, enable_gqa=False):
        self.assert_trains_through_swr(q, k, v, is_causal=causal, enable_gqa=enable_gqa)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a fallback would warn
            out = swr_torch.attention(q, k, v, is_causal=causal, enable_gqa=enable_gqa,
                                      catalog=self.catalog, fallback="error")
        self.assertTrue(out.requires_grad)
        grad = torch.randn_like(out)
        got = torch.autograd.grad(out, (q, k, v), grad)
        expected = math_gradients(q, k, v, grad, causal, enable_gqa)
        for name, g, e in zip(("dq", "dk", "dv"), got, expected):
            self.assertEqual(g.shape, e.shape, name)
            error = relative_error(g, e)
            self.assertLess(error, self.BOUND[str(q.dtype)], f"{name}: {error:.2e}")

    def test_gradients_match_sdpa_math_on_odd_shapes(self):
        for batch, heads, seq, dtype, causal in ((2, 3, 77, torch.float16, False),
                                                 (2, 3, 130, torch.float16, True),
                                                 (1, 2, 257, torch.bfloat16, True),
                                                 (2, 4, 512, torch.bfloat16, False)):
            with self.subTest(shape=(batch, heads, seq, dtype, causal)):
                q, k, v = (self.leaf(batch, heads, seq, 64, dtype=dtype) for _ in range(3))
                self.check_gradients(q, k, v, causal)

    def test_grouped_query_attention_and_strided_views(self):
        q = self.leaf(2, 8, 300, 64)
        k, v = self.leaf(2, 2, 300, 64), self.leaf(2, 2, 300, 64)
        self.check_gradients(q, k, v, causal=True, enable_gqa=True)
        # [B, S, H, D] projections seen as [B, H, S, D]: gradients of the views' leaves.
        layout = [self.leaf(2, 300, h, 64) for h in (8, 2, 2)]
        q, k, v = (t.transpose(1, 2) for t in layout)
        self.check_gradients(q, k, v, causal=True, enable_gqa=True)

    def test_deterministic_algorithms_give_the_same_gradients_bit_for_bit(self):
        q, k, v = (self.leaf(2, 4, 512, 64) for _ in range(3))
        torch.use_deterministic_algorithms(True, warn_only=True)
        self.addCleanup(torch.use_deterministic_algorithms, False)
        answer = self.assert_trains_through_swr(q, k, v, is_causal=True)
        self.assertTrue(answer["backward"]["deterministic"])
        self.assertTrue(answer["backward"]["variant"].endswith("-det"), answer["backward"])
        grad = torch.randn(q.shape, device="cuda", dtype=q.dtype)
        runs = []
        for _ in range(2):
            out = swr_torch.attention(q, k, v, is_causal=True, catalog=self.catalog,
                                      fallback="error")
            runs.append(torch.autograd.grad(out, (q, k, v), grad))
        for first, second in zip(*runs):
            self.assertTrue(torch.equal(first, second))

    def model(self):
        catalog = self.catalog

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.qkv = torch.nn.Linear(256, 768, dtype=torch.float16, device="cuda")

            def forward(self, x):
                q, k, v = self.qkv(x).view(x.shape[0], x.shape[1], 3, 4, 64).unbind(2)
                out = swr_torch.attention(q.transpose(1, 2), k.transpose(1, 2),
                                          v.transpose(1, 2), is_causal=True, catalog=catalog,
                                          fallback="error")
                return out.float().square().mean()

        torch.manual_seed(1)
        return Block()

    def test_torch_compile_fullgraph_training_step(self):
        # The model compiled whole (swr's forward op in its forward graph, the backward op in the
        # backward graph AOTAutograd makes of it) and the optimizer's step compiled (not
        # fullgraph: torch's own optimizer step breaks its graph on purpose, _use_grad); the
        # eager run from the same weights gives the same losses and weights.
        x = torch.randn(2, 512, 256, device="cuda", dtype=torch.float16)
        results = []
        for compiled in (False, True):
            model = self.model()
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            forward = torch.compile(model, fullgraph=True) if compiled else model
            update = torch.compile(optimizer.step) if compiled else optimizer.step
            losses = []
            for _ in range(3):
                optimizer.zero_grad(set_to_none=True)
                loss = forward(x)
                loss.backward()
                update()
                losses.append(loss.item())
            results.append((losses, model.qkv.weight.detach().clone()))
        (eager_losses, eager_weight), (compiled_losses, compiled_weight) = results
        self.assertLess(eager_losses[-1], eager_losses[0])
        for eager, compiled in zip(eager_losses, compiled_losses):
            self.assertAlmostEqual(eager, compiled, delta=1e-3 * abs(eager))
        torch.testing.assert_close(compiled_weight, eager_weight, atol=2e-3, rtol=0)

    def test_cuda_graph_capture_of_a_training_step(self):
        model = self.model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(2, 512, 256, device="cuda", dtype=torch.float16)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):  # warm up: plans, kernels loaded, allocator pools
                optimizer.zero_grad(set_to_none=True)
                model(x).backward()
                optimizer.step()
        torch.cuda.current_stream().wait_stream(side)
        reference = self.model()
        reference.load_state_dict(model.state_dict())
        graph = torch.cuda.CUDAGraph()
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            loss = model(x)
            loss.backward()
            optimizer.step()
        # The capture ran nothing: one replay is one step from the reference's weights.
        model.load_state_dict(reference.state_dict())
        graph.replay()
        torch.cuda.synchronize()
        expected = reference(x)
        expected.backward()
        torch.testing.assert_close(loss, expected, atol=1e-4, rtol=1e-3)
        torch.testing.assert_close(model.qkv.weight.grad, reference.qkv.weight.grad, atol=1e-3,
                                   rtol=1e-2)


if __name__ == "__main__":
    unittest.main()
