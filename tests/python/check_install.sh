#!/usr/bin/env bash
# The package as a user gets it (issue 15): README's install command, `pip install ./python`, run
# from a fresh copy of the tracked files into a new virtual environment; then the package
# imported from there (not from the source tree), and its tests run on it with pytest (installed
# into that environment from the package registry, as pip fetches the build backend). The
# compiled hot path (swr._hotpath_ext) must have been built there, and both hot paths pass the
# same tests. Then the same install where the C compiler fails (CC=false): it must succeed
# without the extension, and the Python hot path must serve alone.
# swr.torch's tests that need no GPU (its ops registered with their schema, bad tensors named
# before anything runs) run on torch from PyPI (TORCH_VERSION, the GPU machines' 2.11.0): the
# build PyPI has for Linux is the CUDA one, which runs on a CPU too, but it is 4.6 GB with its
# NVIDIA wheels, so it is installed once per build tree into TORCH_SITE and the new environment
# sees it through a .pth file (swr itself is still imported from the new environment). Its GPU
# tests skip here ("no CUDA device") and run on the GPU machine.
#   tests/python/check_install.sh SOURCE_DIR LIBRARY TORCH_SITE  (CTest: python_package_install)
set -euo pipefail
source_dir=$(cd "$1" && pwd)
library=$(realpath "$2")
torch_site=$(realpath -m "$3")
torch_version=${TORCH_VERSION:-2.11.0}
python=${PYTHON:-python3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# torch into TORCH_SITE, once: into a new directory beside it, renamed into place when whole.
if [[ ! -f $torch_site/torch-$torch_version.installed ]]; then
  echo "installing torch $torch_version from PyPI into $torch_site (once per build tree)"
  rm -rf "$torch_site" "$torch_site.partial"
  "$python" -m pip --disable-pip-version-check install --quiet --no-cache-dir \
    --target "$torch_site.partial" "torch==$torch_version" numpy
  touch "$torch_site.partial/torch-$torch_version.installed"
  mv "$torch_site.partial" "$torch_site"
fi

# A fresh clone's files: what git tracks (plus what is staged), nothing built or cached.
mkdir "$scratch/clone"
if git -C "$source_dir" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$source_dir" ls-files -z --cached -- python tests/python bench/results/gemm-sweep-h200 |
    (cd "$source_dir" && xargs -0 cp --parents -t "$scratch/clone")
else
  cp -r "$source_dir/python" "$source_dir/tests" "$source_dir/bench" "$scratch/clone/"
fi

# install VENV [VARIABLE=VALUE...]: `pip install ./python` into a new VENV (with those variables
# set for the build) from a copy of the clone's python/ of its own (pip builds in the source
# tree: an earlier build's output there would be taken as it is), and pytest there.
install() {
  local venv=$1 source
  shift
  source=$(mktemp -d -p "$scratch")
  cp -r "$scratch/clone/python" "$source/"
  "$python" -m venv "$venv"
  (cd "$source" && env "$@" "$venv/bin/python" -m pip --disable-pip-version-check \
    install --no-cache-dir --quiet ./python)
  "$venv/bin/python" -m pip --disable-pip-version-check install --quiet pytest
  local site
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$torch_site" > "$site/torch-site.pth"
}

# check VENV HOT_PATHS: swr imported from VENV (not from the source tree), the library loaded
# through it, and the compiled hot path there or not as HOT_PATHS ("compiled,python" or
# "python") says.
check() {
  "$1/bin/python" - "$1" "$2" <<'PYTHON'
import sys
import swr
import swr.torch  # registers its ops: torch from the .pth file, swr from the new environment
from swr import _hotpath
if not swr.__file__.startswith(sys.argv[1]):
    sys.exit(f"swr imported from {swr.__file__}, not from the installed package")
built = _hotpath.compiled() is not None
if built != ("compiled" in sys.argv[2].split(",")):
    sys.exit(f"swr._hotpath_ext is {'' if built else 'not '}installed: expected {sys.argv[2]}")
print(f"swr {swr.version()} imported from {swr.__file__}; hot paths: {sys.argv[2]}")
PYTHON
}

export SWR_RUNTIME_LIBRARY=$library SWR_TEST_INSTALLED=1 SWR_TEST_REQUIRE_TORCH=1
cd "$scratch"
tests=$scratch/clone/tests/python
install "$scratch/venv"
check "$scratch/venv" compiled,python
SWR_TEST_HOT_PATHS=compiled,python "$scratch/venv/bin/python" -m pytest -q -p no:cacheprovider \
  -rs "$tests/test_swr_inputs.py" "$tests/test_swr_binding.py" "$tests/test_swr_hot_path.py" \
  "$tests/test_swr_torch.py" "$tests/test_swr_torch_autograd.py" "$tests/test_swr_torch_training.py"

# Where the C compiler fails: installed all the same, the Python hot path alone.
install "$scratch/venv-no-compiler" CC=false
check "$scratch/venv-no-compiler" python
SWR_TEST_HOT_PATHS=python "$scratch/venv-no-compiler/bin/python" -m pytest -q \
  -p no:cacheprovider -rs "$tests/test_swr_hot_path.py"
