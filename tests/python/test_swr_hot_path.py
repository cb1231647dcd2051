"""swr.torch's eager hot path without torch or a GPU (python/swr/_hotpath.py and its compiled twin
swr/_hotpath_ext.c), both implementations through the same cases: stand-in tensors over host
memory (ctypes buffers), the tensor library's hooks as stand-ins that record their calls, and a
launch function that is a C function pointer (a ctypes callback) computing o = q + 2k + 3v on
the pointers it gets, so that a wrong pointer, order or output shows in the numbers; then the
real swr_launch_attention / swr_launch_gemm of libswr_runtime.so called through the same path
with no prepared launch, which must come back as the C API's error.

The compiled twin is tested where it was built: in the package that tests/python/check_install.sh
installs (which sets SWR_TEST_HOT_PATHS to say which ones must be there); in the source tree it
is absent and skipped unless built in place."""
import ctypes
import gc
import os
import shutil
import sys
import tempfile
import threading
import unittest
import weakref
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
if not os.environ.get("SWR_TEST_INSTALLED"):
    sys.path.insert(0, str(REPOSITORY / "python"))
import swr  # noqa: E402
from swr import _hotpath, _native  # noqa: E402
from swr.catalog import Launch  # noqa: E402

# "compiled,python": both must be there (the installed package); "python": the compiled one
# must be absent (an install without a C compiler); unset: the compiled one is tested if built.
EXPECTED = os.environ.get("SWR_TEST_HOT_PATHS")

ATTENTION_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64,
                                      ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
                                      ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint64)
GEMM_FUNCTION = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64,
                                 ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64)
_live = {}  # data pointer -> tensor, while it exists


class Tensor:
    """What the hot path uses of a tensor, over a host buffer of float32."""

    def __init__(self, shape, values=None, dtype="float16", device=("cuda", 0), contiguous=True):
        self.shape, self.dtype, self.device, self._contiguous = tuple(shape), dtype, device, contiguous
        count = 1
        for size in self.shape:
            count *= size
        self.buffer = (ctypes.c_float * count)(*(values or []))
        _live[self.data_ptr()] = weakref.ref(self)
        self.calls = []

    def __del__(self):
        _live.pop(ctypes.addressof(self.buffer), None)

    def values(self):
        return list(self.buffer)

    def is_contiguous(self):
        self.calls.append("is_contiguous")
        return self._contiguous

    def contiguous(self):
        self.calls.append("contiguous")
        if self._contiguous:
            return self
        return Tensor(self.shape, self.values(), self.dtype, self.device)

    def data_ptr(self):
        return ctypes.addressof(self.buffer)

    def new_empty(self, shape):
        return Tensor(shape, dtype=self.dtype, device=self.device)


def floats(pointer, count):
    return (ctypes.c_float * count).from_address(pointer)


class Hooks:
    """The tensor library's side, recorded."""

    def __init__(self):
        self.device = 0
        self.capturing_now = False
        self.calls = []

    def arguments(self, first_attention, first_matmul):
        return dict(empty_like=self.empty_like, current_device=self.current_device,
                    raw_stream=self.raw_stream, capturing=self.capturing,
                    capture_workspace=self.capture_workspace, on_device=self.on_device,
                    strided_attention=self.strided_attention, first_attention=first_attention,
                    first_matmul=first_matmul)

    def empty_like(self, tensor):
        self.calls.append("empty_like")
        return Tensor(tensor.shape, dtype=tensor.dtype, device=tensor.device)

    def current_device(self):
        return self.device

    def raw_stream(self, index):
        return 1000 + index

    def capturing(self):
        self.calls.append("capturing")
        return self.capturing_now

    def capture_workspace(self, tensor):
        self.calls.append("capture_workspace")
        counter = Tensor((1,))
        self.counter = weakref.ref(counter)  # alive only as long as the hot path keeps it
        return counter

    def strided_attention(self, runner, q, k, v):
        """swr.torch passes the strides the kernels take; here: the call, recorded."""
        self.calls.append(("strided_attention", runner.launch, runner.device_index,
                           runner.dynamic))
        return ("strided", q, k, v)

    def on_device(self, index, run, *tensors):
        self.calls.append(("on_device", index))
        saved, self.device = self.device, index
        try:
            return run(*tensors)
        finally:
            self.device = saved


class FailedLaunch(Exception):
    pass


class FakeLaunch:
    """A prepared launch (swr.catalog.Launch's interface) whose function is a C callback."""

    def __init__(self, hooks, prototype, compute, status=0):
        self.hooks, self.status, self.compute, self.seen = hooks, status, compute, []
        self.function = prototype(self._called)
        self.address = ctypes.cast(self.function, ctypes.c_void_p).value
        self.handle = 0x5EED

    def _called(self, handle, *arguments):
        self.seen.append({"handle": handle, "arguments": arguments, "device": self.hooks.device})
        self.compute(*arguments)
        return self.status

    def fail(self, status):
        raise FailedLaunch(status)


def attention_compute(count):
    def compute(q, k, v, o, workspace, flags, stream):
        if workspace:  # the counter must still exist when the launch is enqueued
            assert workspace in _live and _live[workspace]() is not None, "counter freed"
        inputs = [floats(pointer, count) for pointer in (q, k, v)]
        out = floats(o, count)
        for i in range(count):
            out[i] = inputs[0][i] + 2 * inputs[1][i] + 3 * inputs[2][i]
    return compute


def gemm_compute(a_shape, b_shape):
    m, k = a_shape
    n = b_shape[1]

    def compute(a, b, c, stream):
        a_values, b_values, c_values = floats(a, m * k), floats(b, k * n), floats(c, m * n)
        for row in range(m):
            for column in range(n):
                c_values[row * n + column] = sum(a_values[row * k + i] * b_values[i * n + column]
                                                 for i in range(k))
    return compute


def implementations():
    found = {"python": _hotpath.HotPath}
    if _hotpath.compiled() is not None:
        found["compiled"] = _hotpath.compiled()
    return found


class HotPathCases:
    """The cases, run on each implementation (the subclasses name it)."""

    kind = None
    SHAPE = (1, 2, 3, 2)  # [B, H, S, D]: 12 elements

    def setUp(self):
        found = implementations()
        if self.kind not in found:
            self.skipTest(f"the {self.kind} hot path is not built here")
        self.hooks = Hooks()
        self.first_calls = []
        self.hot = found[self.kind](**self.hooks.arguments(self.first_attention,
                                                           self.first_matmul))
        self.dynamic = False
        self.attention_launch = FakeLaunch(self.hooks, ATTENTION_FUNCTION, attention_compute(12))
        self.refuse = None

    # What swr.torch's first-call functions do, minus the checks.
    def first_attention(self, hot, key, q, k, v, is_causal, scale, fallback, catalog,
                        enable_gqa):
        self.first_calls.append(key)
        if self.refuse is not None:
            raise self.refuse
        if fallback == "peer":
            run = lambda q, k, v: ("peer", q, k, v)  # noqa: E731
        else:
            run = hot.attention_launch(self.attention_launch, 0, self.dynamic)
        if key is not None:
            hot.attention_runners[key] = run
        return run

    def first_matmul(self, hot, key, a, b, fallback, catalog):
        self.first_calls.append(key)
        if fallback == "peer":
            run = lambda a, b: ("peer", a, b)  # noqa: E731
        else:
            run = hot.matmul_launch(self.gemm_launch, 0, (a.shape[0], b.shape[1]))
        if key is not None:
            hot.matmul_runners[key] = run
        return run

    def inputs(self, contiguous=True, device=("cuda", 0)):
        return [Tensor(self.SHAPE, [float(i + 10 * t) for i in range(12)], device=device,
                       contiguous=contiguous) for t in range(3)]

    def expected(self, q, k, v):
        return [a + 2 * b + 3 * c for a, b, c in zip(q.values(), k.values(), v.values())]

    def call(self, q, k, v, **options):
        arguments = dict(is_causal=False, scale=None, fallback="sdpa", catalog=None,
                         enable_gqa=False)
        arguments.update(options)
        return self.hot.attention(q, k, v, *arguments.values())

    def test_a_call_launches_on_its_pointers_and_stream_and_returns_the_output(self):
        q, k, v = self.inputs()
        out = self.call(q, k, v)
        self.assertEqual(out.values(), self.expected(q, k, v))
        self.assertEqual(out.shape, q.shape)
        (seen,) = self.attention_launch.seen
        self.assertEqual(seen["handle"], 0x5EED)
        self.assertEqual(seen["arguments"], (q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                             out.data_ptr(), 0, 0, 1000))
        self.assertEqual(self.hooks.calls, ["empty_like"])  # not dynamic: no capture check
        self.assertEqual(q.calls, ["is_contiguous"])

    def test_later_calls_of_a_key_take_its_runner_and_other_keys_come_first_again(self):
        q, k, v = self.inputs()
        for _ in range(3):
            self.call(q, k, v)
        key = (q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype, q.device, k.device,
               v.device, False, None, "sdpa", None, False)
        self.assertEqual(self.first_calls, [key])
        self.assertEqual(list(self.hot.attention_runners), [key])
        runner = self.hot.attention_runners[key]
        self.assertIs(runner.launch, self.attention_launch)
        self.call(q, k, v, is_causal=True)
        self.call(*self.inputs(device=("cuda", 1)))
        self.call(q, k, v, enable_gqa=True)
        self.assertEqual(len(self.first_calls), 4)
        self.assertEqual(len(self.attention_launch.seen), 6)

    def test_inputs_of_other_strides_go_to_the_strided_hook_with_the_runner(self):
        self.dynamic = True
        q, k, v = self.inputs(contiguous=False)
        self.assertEqual(self.call(q, k, v), ("strided", q, k, v))
        self.assertEqual(self.hooks.calls, [("strided_attention", self.attention_launch, 0, True)])
        self.assertEqual(self.attention_launch.seen, [])  # the hook launches, not the hot path
        self.assertEqual((q.calls, k.calls), (["is_contiguous"], []))

    def test_another_current_device_is_switched_to_for_the_call(self):
        self.hooks.device = 1
        q, k, v = self.inputs()
        out = self.call(q, k, v)
        self.assertEqual(out.values(), self.expected(q, k, v))
        self.assertEqual(self.hooks.calls[0], ("on_device", 0))
        self.assertEqual(self.attention_launch.seen[0]["device"], 0)
        self.assertEqual(self.hooks.device, 1)

    def test_a_dynamic_kernel_being_captured_gets_a_counter_that_lives_through_the_launch(self):
        self.dynamic = True
        q, k, v = self.inputs()
        self.call(q, k, v)  # not captured: swr's pooled counter (0)
        self.assertEqual(self.attention_launch.seen[0]["arguments"][4], 0)
        self.hooks.capturing_now = True
        out = self.call(q, k, v)
        self.assertEqual(out.values(), self.expected(q, k, v))
        self.assertNotEqual(self.attention_launch.seen[1]["arguments"][4], 0)
        self.assertEqual(self.hooks.calls, ["empty_like", "capturing", "empty_like",
                                            "capturing", "capture_workspace"])
        gc.collect()
        self.assertIsNone(self.hooks.counter())  # released after the call

    def test_a_failed_launch_raises_what_fail_raises_and_returns_nothing(self):
        self.attention_launch.status = 4
        with self.assertRaises(FailedLaunch) as raised:
            self.call(*self.inputs())
        self.assertEqual(raised.exception.args, (4,))
        self.attention_launch.handle = None  # a closed catalog: the C function gets NULL
        with self.assertRaises(FailedLaunch):
            self.call(*self.inputs())
        self.assertIsNone(self.attention_launch.seen[-1]["handle"])

    def test_calls_without_a_key_ask_every_time_and_refusals_are_not_remembered(self):
        q, k, v = self.inputs()
        self.call(q, k, v, scale=[0.5])  # unhashable
        self.call(q, k, v, scale=[0.5])
        with self.assertRaises(AttributeError):  # a runner on a list: what the runner raises
            self.call([1.0], k, v)
        self.assertEqual(self.first_calls, [None, None, None])
        self.refuse = ValueError("refused")
        for _ in range(2):
            with self.assertRaises(ValueError) as raised:
                self.call(q, k, v, fallback="error")
            self.assertIsNone(raised.exception.__context__)
        self.assertEqual(len(self.first_calls), 5)
        self.assertEqual(dict(self.hot.attention_runners), {})

    def test_a_runner_that_is_not_swrs_is_called_with_the_tensors(self):
        q, k, v = self.inputs()
        self.assertEqual(self.call(q, k, v, fallback="peer"), ("peer", q, k, v))
        self.assertEqual(self.call(q, k, v, fallback="peer"), ("peer", q, k, v))
        self.assertEqual(len(self.first_calls), 1)
        self.assertEqual(self.hot.matmul(q, k, "peer", None), ("peer", q, k))

    def test_a_hook_that_raises_is_an_exception_of_the_call(self):
        def broken(tensor):
            raise MemoryError("out of memory")
        hot = type(self.hot)(**dict(self.hooks.arguments(self.first_attention, self.first_matmul),
                                    empty_like=broken))
        q, k, v = self.inputs()
        with self.assertRaises(MemoryError):
            hot.attention(q, k, v, False, None, "sdpa", None, False)
        self.assertEqual(self.attention_launch.seen, [])

    def test_matmul_launches_a_b_c_and_returns_c_of_the_product_shape(self):
        a = Tensor((2, 3), [1, 2, 3, 4, 5, 6], contiguous=False)
        b = Tensor((3, 2), [1, 0, 0, 1, 1, 1])
        self.gemm_launch = FakeLaunch(self.hooks, GEMM_FUNCTION, gemm_compute(a.shape, b.shape))
        for _ in range(2):
            c = self.hot.matmul(a, b, "sdpa", None)
            self.assertEqual((c.shape, c.values()), ((2, 2), [4, 5, 10, 11]))
        self.assertEqual(len(self.first_calls), 1)
        arguments = self.gemm_launch.seen[-1]["arguments"]
        self.assertNotEqual(arguments[0], a.data_ptr())  # a's contiguous copy
        self.assertEqual(arguments[1:], (b.data_ptr(), c.data_ptr(), 1000))

    def test_no_reference_is_leaked_or_kept(self):
        def hook(*arguments):  # only the hot path refers to it
            raise AssertionError("not called")
        self.hot = type(self.hot)(**dict(self.hooks.arguments(self.first_attention,
                                                              self.first_matmul), on_device=hook))
        alive, hook = weakref.ref(hook), None
        q, k, v = self.inputs()
        self.call(q, k, v)
        before = [sys.getrefcount(x) for x in (q, k, v, self.attention_launch)]
        for _ in range(200):
            self.call(q, k, v)
        after = [sys.getrefcount(x) for x in (q, k, v, self.attention_launch)]
        self.assertEqual(before, after)
        self.hot = None  # its runners refer to it: a cycle the collector frees
        gc.collect()
        self.assertIsNone(alive())

    def test_threads_call_at_once(self):
        inputs = [self.inputs() for _ in range(4)]
        errors = []

        def work(tensors):
            try:
                for _ in range(100):
                    out = self.call(*tensors)
                    if out.values() != self.expected(*tensors):
                        errors.append("wrong output")
            except Exception as error:  # reported below
                errors.append(error)
        threads = [threading.Thread(target=work, args=(tensors,)) for tensors in inputs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(self.attention_launch.seen), 400)

    def test_the_runtime_functions_refuse_a_launch_with_no_handle_through_this_path(self):
        # The real swr_launch_attention / swr_launch_gemm, called as a prepared launch is, with
        # the handle a closed catalog leaves: the C API's error, raised as swr's exception.
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        database = Path(directory.name) / "gemm.db"
        shutil.copyfile(os.environ.get("SWR_TEST_GEMM_DB",
                                       REPOSITORY / "build" / "test-data" / "gemm.db"), database)
        catalog = swr.Catalog(database)
        lib = _native.native().lib
        attention = Launch(catalog, lib.swr_launch_attention, None)
        gemm = Launch(catalog, lib.swr_launch_gemm, None)
        self.hot = type(self.hot)(**self.hooks.arguments(
            lambda hot, key, *call: hot.attention_launch(attention, 0, False),
            lambda hot, key, *call: hot.matmul_launch(gemm, 0, (2, 2))))
        q, k, v = self.inputs()
        for run in (lambda: self.call(q, k, v), lambda: self.hot.matmul(q, k, "sdpa", None)):
            with self.assertRaises(swr.InvalidArgument) as raised:
                run()
            self.assertEqual(str(raised.exception), "prepared is null: allowed a pointer")
        catalog.close()
        with self.assertRaises(swr.InvalidArgument) as raised:
            self.call(q, k, v)
        self.assertEqual(str(raised.exception), "the catalog is closed")


class PythonHotPathTest(HotPathCases, unittest.TestCase):
    kind = "python"


class CompiledHotPathTest(HotPathCases, unittest.TestCase):
    kind = "compiled"


class ChoiceTest(unittest.TestCase):
    def test_the_ones_that_must_be_here_are(self):
        if EXPECTED is None:
            self.skipTest("SWR_TEST_HOT_PATHS is not set (tests/python/check_install.sh sets it)")
        self.assertEqual(sorted(implementations()), sorted(EXPECTED.split(",")))

    def test_the_setting_chooses_and_a_wrong_one_is_named(self):
        self.assertIs(_hotpath.choose("python"), _hotpath.HotPath)
        built = _hotpath.compiled()
        self.assertIs(_hotpath.choose(""), built or _hotpath.HotPath)
        if built is None:
            with self.assertRaises(ImportError) as raised:
                _hotpath.choose("compiled")
            self.assertIn("hot path 'compiled': swr._hotpath_ext was not built", str(raised.exception))
        else:
            self.assertIs(_hotpath.choose("compiled"), built)
            self.assertEqual(built(**Hooks().arguments(None, None)).kind, "compiled")
        saved = os.environ.get("SWR_HOT_PATH")
        try:
            os.environ["SWR_HOT_PATH"] = "fast"
            with self.assertRaises(ValueError) as raised:
                _hotpath.choose()
            self.assertEqual(str(raised.exception),
                             "SWR_HOT_PATH='fast': allowed 'compiled', 'python' or unset")
            os.environ["SWR_HOT_PATH"] = "python"
            self.assertIs(_hotpath.choose(), _hotpath.HotPath)
        finally:
            if saved is None:
                os.environ.pop("SWR_HOT_PATH", None)
            else:
                os.environ["SWR_HOT_PATH"] = saved


if __name__ == "__main__":
    unittest.main()
