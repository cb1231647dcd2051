"""The one thing pyproject.toml cannot say: swr._hotpath_ext, swr.torch's compiled hot path
(swr/_hotpath_ext.c), built against CPython's stable ABI and optional: where it cannot be built
(no C compiler or no Python headers, a Python older than 3.10, another implementation than
CPython, or SWR_NO_EXTENSION=1) the install goes on without it and swr.torch runs the same path
in Python (swr/_hotpath.py)."""
import os
import platform
import sys

from setuptools import Extension, setup

extensions, options = [], {}
if (platform.python_implementation() == "CPython" and sys.version_info >= (3, 10)
        and os.environ.get("SWR_NO_EXTENSION", "") in ("", "0")):
    extensions.append(Extension(
        "swr._hotpath_ext", ["swr/_hotpath_ext.c"],  # which defines Py_LIMITED_API (3.10)
        py_limited_api=True, optional=True))
    options["bdist_wheel"] = {"py_limited_api": "cp310"}  # an abi3 wheel: any CPython >= 3.10

setup(ext_modules=extensions, options=options)
