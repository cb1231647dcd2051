#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: runs the GPU test programs against a libcuda.so.1 that loads but
# cannot be used (tests/gpu/stub_libcuda.c), once for each way it breaks (cuInit failing, an entry
# point missing, a driver older than 13.0), and checks that every program FAILS with the driver's
# reason instead of skipping as if there were no GPU.
#   scripts/check-unusable-driver.sh BIN_DIR STUB_DIR
# BIN_DIR holds the GPU test programs (scripts/gpu-suite.sh stages them, with the stub, into
# gpu-suite.tar.xz: bin/ and bin/stub-driver/). Exit 0 when every program failed every time.
set -uo pipefail
bin=${1:?usage: scripts/check-unusable-driver.sh BIN_DIR STUB_DIR}
stub=${2:?usage: scripts/check-unusable-driver.sh BIN_DIR STUB_DIR}
if [[ ! -e "$stub/libcuda.so.1" ]]; then
  echo "no $stub/libcuda.so.1 (build target swr_stub_libcuda)" >&2
  exit 2
fi
if ! compgen -G "/proc/driver/nvidia/gpus/*" >/dev/null && ! compgen -G "/dev/nvidia[0-9]*" >/dev/null; then
  echo "no NVIDIA device on this machine: the GPU tests skip here, so there is nothing to check" >&2
  exit 2
fi
stub=$(realpath "$stub")

status=0
for failure in cuInit entry-point version; do
  for program in "$bin"/*_test; do
    log=$(mktemp)
    LD_LIBRARY_PATH="$stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" SWR_STUB_DRIVER_FAILURE=$failure \
      timeout 300 "$program" >"$log" 2>&1
    code=$?
    reason=$(grep -m1 -o 'the CUDA driver cannot use it: .*' "$log" | cut -c1-160 || true)
    if [[ $code -ne 0 && -n $reason ]]; then
      echo "stub driver ($failure): $(basename "$program") failed (exit $code): $reason"
    else
      echo "stub driver ($failure): $(basename "$program") did NOT fail with the driver's reason" \
        "(exit $code, $(grep -c '\[  SKIPPED \]' "$log") skipped lines)"
      status=1
    fi
    rm -f "$log"
  done
done
exit $status
