#!/usr/bin/env bash
# The package as a user gets it (issue 15): README's install command, `pip install ./python`, run
# from a fresh copy of the tracked files into a new virtual environment; then the package
# imported from there (not from the source tree), and its bad-input tests run on it with pytest
# (installed into that environment from the package registry, as pip fetches the build backend).
# No torch is installed: the torch tests skip (PyPI's torch for Linux is the CUDA build, gigabytes
# with its NVIDIA wheels); they run on the GPU machine.
#   tests/python/check_install.sh SOURCE_DIR LIBRARY      (CTest: python_package_install)
set -euo pipefail
source_dir=$(cd "$1" && pwd)
library=$(realpath "$2")
python=${PYTHON:-python3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# A fresh clone's files: what git tracks (plus what is staged), nothing built or cached.
mkdir "$scratch/clone"
if git -C "$source_dir" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$source_dir" ls-files -z --cached -- python tests/python bench/results/gemm-sweep-h200 |
    (cd "$source_dir" && xargs -0 cp --parents -t "$scratch/clone")
else
  cp -r "$source_dir/python" "$source_dir/tests" "$source_dir/bench" "$scratch/clone/"
fi

"$python" -m venv "$scratch/venv"
pip=("$scratch/venv/bin/python" -m pip --disable-pip-version-check)
(cd "$scratch/clone" && "${pip[@]}" install --quiet ./python)
"${pip[@]}" install --quiet pytest

export SWR_RUNTIME_LIBRARY=$library SWR_TEST_INSTALLED=1
cd "$scratch"
# Imported from the environment, and the library loaded through it.
"$scratch/venv/bin/python" - "$scratch/venv" <<'PYTHON'
import sys
import swr
if not swr.__file__.startswith(sys.argv[1]):
    sys.exit(f"swr imported from {swr.__file__}, not from the installed package")
print(f"swr {swr.version()} imported from {swr.__file__}")
PYTHON
"$scratch/venv/bin/python" -m pytest -q -p no:cacheprovider -rs \
  "$scratch/clone/tests/python/test_swr_inputs.py" "$scratch/clone/tests/python/test_swr_binding.py" \
  "$scratch/clone/tests/python/test_swr_torch.py"
