#!/usr/bin/env bash
# The package as a user gets it (issue 30): `pip install .` from a fresh copy of the tracked files
# into a new virtual environment, which builds the one wheel with CMake (pyproject.toml:
# libswr_runtime.so, swr-tune, the compiled hot path). Then, with no SWR_* variable set, as
# docs/python.md promises: `swr-tune --gpu gb10 --seq 4096` from that environment's PATH,
# `import swr, swr.torch` and `swr.__version__` (CMakeLists.txt's version), the library loaded
# from the installed package; then the package's tests run on it with pytest (installed into that
# environment from the package registry, as pip fetches the build backend), both hot paths.
# swr.torch's tests that need no GPU (its ops registered with their schema, bad tensors named
# before anything runs) run on torch from PyPI (TORCH_VERSION, the GPU machines' 2.11.0): the
# build PyPI has for Linux is the CUDA one, which runs on a CPU too, but it is 4.6 GB with its
# NVIDIA wheels, so it is installed once per build tree into TORCH_SITE and the new environment
# sees it through a .pth file (swr itself is still imported from the new environment). Its GPU
# tests skip here ("no CUDA device") and run on the GPU machine.
#   tests/python/check_install.sh SOURCE_DIR TORCH_SITE WORK_DIR  (CTest: python_package_install)
# WORK_DIR (emptied first) holds the copy and its build: inside the build tree, the copy's
# build/ has the source tree's own layout, so that where ccache is on (CMAKE_CXX_COMPILER_LAUNCHER,
# as scripts/build.sh sets it) the wheel's compilations are the build tree's, already cached.
set -euo pipefail
source_dir=$(cd "$1" && pwd)
torch_site=$(realpath -m "$2")
work=$(realpath -m "$3")
torch_version=${TORCH_VERSION:-2.11.0}
python=${PYTHON:-python3}
gemm_db=${SWR_TEST_GEMM_DB:?SWR_TEST_GEMM_DB: the decompressed GEMM database (tests/CMakeLists.txt)}

# What comes from the package registry is fetched with pip's own retries and, where a download
# still breaks off (a reset connection in the middle of a 1 GB wheel), again from the start: a
# registry's hiccup is not the package's fault. The first argument is how many tries, 20 s apart.
pip_install_retrying() {
  local attempts=$1 attempt
  shift
  for ((attempt = 1; ; attempt++)); do
    "$@" && return 0
    if ((attempt >= attempts)); then
      echo "python_package_install: '$*' failed $attempt times" >&2
      return 1
    fi
    echo "python_package_install: attempt $attempt of $attempts failed; again in 20 s" >&2
    sleep 20
  done
}
pip_network=(--disable-pip-version-check --retries 10 --timeout 60)

# torch into TORCH_SITE, once: into a new directory beside it, renamed into place when whole.
# Its 30 wheels (2.6 GiB, in pip's temporary directory) and their files (4.7 GiB) are on disk at
# once; where less is free, say so in one line instead of pip's "No space left" among its output.
torch_needs_gib=8
if [[ ! -f $torch_site/torch-$torch_version.installed ]]; then
  echo "installing torch $torch_version from PyPI into $torch_site (once per build tree)"
  rm -rf "$torch_site" "$torch_site.partial"
  mkdir -p "$(dirname "$torch_site")"
  for directory in "$(dirname "$torch_site")" "${TMPDIR:-/tmp}"; do
    free_gib=$(($(df --output=avail -B1 "$directory" | tail -1) >> 30))
    if ((free_gib < torch_needs_gib)); then
      echo "python_package_install: $directory has $free_gib GiB free; installing torch" \
        "$torch_version from PyPI needs about $torch_needs_gib GiB there" >&2
      exit 1
    fi
  done
  install_torch() {
    rm -rf "$torch_site.partial"
    "$python" -m pip "${pip_network[@]}" install --quiet --no-cache-dir \
      --target "$torch_site.partial" "torch==$torch_version" numpy
  }
  pip_install_retrying 3 install_torch
  touch "$torch_site.partial/torch-$torch_version.installed"
  mv "$torch_site.partial" "$torch_site"
fi

# A fresh clone's files: what git tracks (plus what is staged, less what is deleted), nothing built
# or cached.
rm -rf "$work"
mkdir -p "$work/clone"
(cd "$source_dir" && git ls-files -z --cached |
  xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' files |
  xargs -0 cp --parents -t "$work/clone")

# No SWR_* variable from here on, as a user has none; ccache's base directory covers both trees.
swr_variables=$(compgen -e | grep '^SWR_' || true)
for variable in $swr_variables; do unset "$variable"; done
if [[ -n ${CMAKE_CXX_COMPILER_LAUNCHER:-} ]]; then
  # The same generator as the build tree (the default preset's), so that every compile line is
  # the same once ccache has made its paths relative to the base directory.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$source_dir} CMAKE_GENERATOR=${CMAKE_GENERATOR:-Unix Makefiles}
fi
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

venv=$work/venv
"$python" -m venv "$venv"
start=$SECONDS
# (the build backend comes from the registry too; a second attempt rebuilds from ccache)
(cd "$work" && pip_install_retrying 2 "$venv/bin/python" -m pip "${pip_network[@]}" install \
  --no-cache-dir --quiet --config-settings=build-dir="$work/clone/build" ./clone)
echo "pip install . took $((SECONDS - start)) s"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$torch_site" > "$site/torch-site.pth"

# swr-tune from the environment's PATH (not the build tree's): the main job without the GPU.
cd "$work"
export PATH="$venv/bin:$PATH"
[[ $(command -v swr-tune) == "$venv/bin/swr-tune" ]] || {
  echo "swr-tune on the PATH is $(command -v swr-tune), not the environment's" >&2; exit 1; }
# (its database and cubin cache in WORK_DIR, not in the user's cache)
XDG_CACHE_HOME=$work/cache swr-tune --gpu gb10 --seq 4096 > "$work/main-job.txt"
grep -q "^stored [0-9]* predictions" "$work/main-job.txt" || {
  echo "swr-tune --gpu gb10 --seq 4096 printed no predictions:" >&2; cat "$work/main-job.txt" >&2
  exit 1; }

expected_version=$(sed -n 's/^project(swr VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
python -c "import swr, swr.torch; print(swr.__version__)" > "$work/version.txt"
[[ $(cat "$work/version.txt") == "$expected_version" ]] || {
  echo "swr.__version__ is '$(cat "$work/version.txt")', expected $expected_version" >&2; exit 1; }

# Imported from the environment, the library from inside the package, the compiled hot path built.
python - "$site" <<'PYTHON'
import os, sys
import swr
import swr.torch  # registers its ops: torch from the .pth file, swr from the new environment
from swr import _hotpath, _native
site = sys.argv[1]
if not swr.__file__.startswith(site):
    sys.exit(f"swr imported from {swr.__file__}, not from the installed package in {site}")
loaded = _native.native().lib._name
if loaded != os.path.join(os.path.dirname(swr.__file__), "libswr_runtime.so"):
    sys.exit(f"libswr_runtime.so loaded from {loaded}, not from the package")
if _hotpath.compiled() is None:
    sys.exit("swr._hotpath_ext was not built into the wheel")
print(f"swr {swr.__version__} (library {swr.version()}) imported from {swr.__file__}, "
      f"its library {loaded}, both hot paths")
PYTHON

pip_install_retrying 3 "$venv/bin/python" -m pip "${pip_network[@]}" install --quiet pytest
tests=$work/clone/tests/python
SWR_TEST_INSTALLED=1 SWR_TEST_REQUIRE_TORCH=1 SWR_TEST_GEMM_DB=$gemm_db \
  SWR_TEST_HOT_PATHS=compiled,python python -m pytest -q -p no:cacheprovider -rs \
  "$tests/test_swr_inputs.py" "$tests/test_swr_binding.py" "$tests/test_swr_hot_path.py" \
  "$tests/test_swr_torch.py" "$tests/test_swr_torch_autograd.py" "$tests/test_swr_torch_training.py"
