"""swr: tuned attention and GEMM kernels, chosen from a catalog and launched by libswr_runtime.so.

    import swr
    catalog = swr.Catalog("kernels-h200/")          # an export directory or a results database
    choice = catalog.best_gemm("h200", 4096, 4096, 4096, "f16")
    catalog.run_gemm(a_ptr, b_ptr, c_ptr, 4096, 4096, 4096, "f16", stream=stream_handle)

PyTorch: `import swr.torch` (swr/torch.py) for swr.torch.attention / matmul / explain.
Where the library is found: swr/_native.py. No tensor library is imported here.
"""
from ._native import (CudaError, InternalError, InvalidArgument, KernelRefused, NoDevice,
                      SwrError, library_candidates)
from .catalog import Catalog, default_catalog_path, device_gpu_name

try:  # written by the wheel's build (cmake/SwrPythonPackage.cmake): CMakeLists.txt's version
    from ._version import __version__
except ImportError:  # the source tree (python/ on sys.path): the loaded library's, on first use
    def __getattr__(name):
        if name == "__version__":
            return version()
        raise AttributeError(f"module 'swr' has no attribute {name!r}")


def version():
    """The version of the loaded libswr_runtime.so."""
    from ._native import native
    return native().lib.swr_version().decode()


__all__ = ["Catalog", "SwrError", "InvalidArgument", "KernelRefused", "NoDevice", "CudaError",
           "InternalError", "library_candidates", "version", "default_catalog_path",
           "device_gpu_name"]
