"""The eager hot path of swr.torch: what one attention() / matmul() call does once its shape has
been seen. Two implementations with one interface: HotPath here, in Python over ctypes, and
swr._hotpath_ext.HotPath, the same in C over CPython's stable ABI (swr/_hotpath_ext.c: the same
methods, checks and order of calls), which `pip install` builds where a C compiler exists: it
does in C what the interpreter does between the calls. swr.torch uses the compiled one when it
is there, unless $SWR_HOT_PATH says "python" (choose()).

Nothing here imports a tensor library: the tensor library's side comes in as callables (the
"hooks"), so both implementations are tested without one (tests/python/test_swr_hot_path.py).

    hot = HotPath(empty_like=..., current_device=..., raw_stream=..., capturing=...,
                  capture_workspace=..., on_device=..., strided_attention=...,
                  first_attention=..., first_matmul=...)
    out = hot.attention(q, k, v, is_causal, scale, fallback, catalog, enable_gqa)  # all given
    c = hot.matmul(a, b, fallback, catalog)

A call is looked up by its key: the shapes, dtypes and devices of its tensors, then its other
arguments as given. The first call of a key (or a call that has none: not tensors, an unhashable
argument) goes to first_attention(hot, key, *call) / first_matmul(hot, key, *call), which checks
it, returns what runs it (a runner: hot.attention_launch(...) for swr's prepared launch, or any
callable, e.g. PyTorch's operator) and remembers that runner in hot.attention_runners[key] when
it should. A runner of a prepared launch (swr.catalog.Launch) runs on its device's current
stream, with that device made current through on_device(index, runner, *tensors) when another
is: a call whose inputs are not all contiguous handed to strided_attention(runner, q, k, v)
(which passes strides the kernels take, copying the rest), otherwise the output allocated, one C
call of the launch's
function with the launch's handle read at each call (closing the catalog clears it, and the C
call refuses it), a nonzero status passed to launch.fail, which raises.
"""
import os

# $SWR_HOT_PATH: "compiled" (the C one, an ImportError if it was not built), "python", or unset
# (the compiled one when it was built, else this one).
HOT_PATHS = ("compiled", "python")


class AttentionLaunch:
    """The runner of a prepared attention launch: runner(q, k, v) -> out."""

    __slots__ = ("hot", "launch", "device_index", "dynamic")

    def __init__(self, hot, launch, device_index, dynamic):
        self.hot = hot
        self.launch = launch
        self.device_index = device_index
        self.dynamic = dynamic  # a dynamic-persistence kernel: it takes a tile counter

    def __call__(self, q, k, v):
        hot, index = self.hot, self.device_index
        if hot.current_device() != index:
            return hot.on_device(index, self, q, k, v)
        if not (q.is_contiguous() and k.is_contiguous() and v.is_contiguous()):
            return hot.strided_attention(self, q, k, v)
        out = hot.empty_like(q)
        # Workspace 0: the runtime takes a zeroed tile counter from its pool for the stream. A
        # launch captured into a CUDA graph gets a counter of its own from the tensor library
        # (the graph's memory; swr clears it in the graph), so that its replays, on whatever
        # stream, share none with eager calls or other graphs. Kept until the launch is enqueued.
        workspace, counter = 0, None
        if self.dynamic and hot.capturing():
            counter = hot.capture_workspace(q)
            workspace = counter.data_ptr()
        launch = self.launch
        status = launch.function(launch.handle, q.data_ptr(), k.data_ptr(), v.data_ptr(),
                                 out.data_ptr(), workspace, 0, hot.raw_stream(index))
        if status:
            launch.fail(status)
        return out


class MatmulLaunch:
    """The runner of a prepared GEMM launch: runner(a, b) -> a @ b, of shape out_shape."""

    __slots__ = ("hot", "launch", "device_index", "out_shape")

    def __init__(self, hot, launch, device_index, out_shape):
        self.hot = hot
        self.launch = launch
        self.device_index = device_index
        self.out_shape = tuple(out_shape)  # (m, n): the key fixes the shapes

    def __call__(self, a, b):
        hot, index = self.hot, self.device_index
        if hot.current_device() != index:
            return hot.on_device(index, self, a, b)
        a, b = a.contiguous(), b.contiguous()
        c = a.new_empty(self.out_shape)
        launch = self.launch
        status = launch.function(launch.handle, a.data_ptr(), b.data_ptr(), c.data_ptr(),
                                 hot.raw_stream(index))
        if status:
            launch.fail(status)
        return c


class HotPath:
    """The hot path in Python (the module's docstring says what it does)."""

    kind = "python"

    def __init__(self, *, empty_like, current_device, raw_stream, capturing, capture_workspace,
                 on_device, strided_attention, first_attention, first_matmul):
        self.empty_like = empty_like  # (q) -> a new tensor like q
        self.current_device = current_device  # () -> the current device's index
        self.raw_stream = raw_stream  # (index) -> that device's current stream, an integer
        self.capturing = capturing  # () -> whether the current stream is being captured
        self.capture_workspace = capture_workspace  # (q) -> 4 bytes on q's device
        self.on_device = on_device  # (index, runner, *tensors) -> runner(*tensors) there
        self.strided_attention = strided_attention  # (runner, q, k, v) -> out, not contiguous
        self.first_attention = first_attention
        self.first_matmul = first_matmul
        self.attention_runners = {}
        self.matmul_runners = {}

    def attention_launch(self, launch, device_index, dynamic):
        return AttentionLaunch(self, launch, device_index, bool(dynamic))

    def matmul_launch(self, launch, device_index, out_shape):
        return MatmulLaunch(self, launch, device_index, out_shape)

    def attention(self, q, k, v, is_causal, scale, fallback, catalog, enable_gqa):
        try:
            key = (q.shape, k.shape, v.shape, q.dtype, k.dtype, v.dtype, q.device, k.device,
                   v.device, is_causal, scale, fallback, catalog, enable_gqa)
            run = self.attention_runners[key]
        except KeyError:  # the first call like this one
            run = None
        except (AttributeError, TypeError):  # not a tensor, or an unhashable argument
            key = run = None
        if run is None:  # outside the handler, so that what the checks raise chains to nothing
            run = self.first_attention(self, key, q, k, v, is_causal, scale, fallback, catalog,
                                       enable_gqa)
        return run(q, k, v)

    def matmul(self, a, b, fallback, catalog):
        try:
            key = (a.shape, b.shape, a.dtype, b.dtype, a.device, b.device, fallback, catalog)
            run = self.matmul_runners[key]
        except KeyError:
            run = None
        except (AttributeError, TypeError):
            key = run = None
        if run is None:
            run = self.first_matmul(self, key, a, b, fallback, catalog)
        return run(a, b)


def compiled():
    """The compiled HotPath class, or None where it was not built (no C compiler, or a Python
    older than 3.10, at install time)."""
    try:
        from . import _hotpath_ext
    except ImportError:
        return None
    return _hotpath_ext.HotPath


def choose(setting=None):
    """The HotPath class to use: `setting` ("compiled", "python", or None for $SWR_HOT_PATH)."""
    if setting is None:
        setting = os.environ.get("SWR_HOT_PATH", "")
        where = f"SWR_HOT_PATH={setting!r}"
    else:
        where = f"hot path {setting!r}"
    if setting not in HOT_PATHS + ("",):
        raise ValueError(f"{where}: allowed " + ", ".join(map(repr, HOT_PATHS)) + " or unset")
    if setting == "python":
        return HotPath
    built = compiled()
    if built is None and setting == "compiled":
        raise ImportError(f"{where}: swr._hotpath_ext was not built when swr was installed (it "
                          "needs a C compiler and Python >= 3.10); allowed 'python' or unset")
    return built or HotPath
