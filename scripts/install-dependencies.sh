#!/usr/bin/env bash
# Installs the Debian packages swr builds with, only those that are missing (apt-get update runs
# only then). The CUDA 13 toolkit is not a Debian package: it must already be in /usr/local/cuda
# (or where CUDAToolkit_ROOT / CUDA_HOME points).
set -euo pipefail

packages=(
  cmake make g++             # toolchain (CMake >= 3.25)
  ccache                     # scripts/test.sh: the wheel's build reuses the build tree's objects
  xz-utils                   # bench/results keeps large files xz-compressed (tests decompress them)
  libsqlitecpp-dev           # the tuning database (linked statically)
  nlohmann-json3-dev         # JSON forms of configs, manifests
  libcli11-dev               # swr-tune's command line
  libssl-dev                 # SHA-256 for cubin cache keys (libcrypto, linked statically)
  liblzma-dev                # the model reads xz-compressed measurements (bench/results)
  libgtest-dev               # the test suite
  libbenchmark-dev           # bench/
  gnuplot-nox                # swr-tune report's PNGs (without it: data and scripts only)
  pkg-config                 # tests/install: a C program built with `pkg-config swr` alone
  python3                    # the Python binding's and the benchmarks' tests
  python3-venv python3-dev   # the package installed into a venv, its C hot path built (headers)
  clang-14 libclang-rt-14-dev  # the fuzz targets (scripts/fuzz.sh): libFuzzer, ASan, UBSan
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "installing missing Debian packages: ${missing[*]}"
  sudo_prefix=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "error: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo_prefix=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_prefix[@]}" apt-get update -q
  "${sudo_prefix[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi

cuda_root=${CUDAToolkit_ROOT:-${CUDA_HOME:-/usr/local/cuda}}
if [[ ! -f $cuda_root/include/cuda.h || ! -f $cuda_root/include/nvrtc.h ]]; then
  echo "error: the CUDA 13 toolkit was not found in $cuda_root (cuda.h, nvrtc.h);" \
    "install it, or set CUDAToolkit_ROOT to where it is" >&2
  exit 1
fi
