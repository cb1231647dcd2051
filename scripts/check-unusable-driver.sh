#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: runs the GPU tests against a libcuda.so.1 that loads but cannot
# be used (build/tests/stub-driver, from tests/gpu/stub_libcuda.c), once for each way it breaks
# (cuInit failing, an entry point missing, a driver older than 13.0), and checks that every one
# of them FAILS with the driver's reason instead of skipping as if there were no GPU.
#   scripts/check-unusable-driver.sh [BUILD_DIR]      (default build/; exit 0 when all failed)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
stub="$build/tests/stub-driver"
if [[ ! -e "$stub/libcuda.so.1" ]]; then
  echo "no $stub/libcuda.so.1: build first (ninja -C $build swr_stub_libcuda and the tests)" >&2
  exit 2
fi
if ! compgen -G "/proc/driver/nvidia/gpus/*" >/dev/null && ! compgen -G "/dev/nvidia[0-9]*" >/dev/null; then
  echo "no NVIDIA device on this machine: the GPU tests skip here, so there is nothing to check" >&2
  exit 2
fi

status=0
for failure in cuInit entry-point version; do
  log=$(mktemp)
  LD_LIBRARY_PATH="$(realpath "$stub")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    SWR_STUB_DRIVER_FAILURE=$failure \
    ctest --test-dir "$build" -L gpu -j "$(nproc)" --output-on-failure >"$log" 2>&1
  LD_LIBRARY_PATH="$(realpath "$stub")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    SWR_STUB_DRIVER_FAILURE=$failure \
    ctest --test-dir "$build" -R '^DriverLoading\.PresentDriverGivesEveryEntryPoint$' \
      --output-on-failure >>"$log" 2>&1
  failed=$(grep -c '\*\*\*Failed' "$log")
  not_failed=$(grep -E 'Test +#[0-9]+: ' "$log" | grep -v '\*\*\*Failed' || true)
  reason=$(grep -m1 -o 'the CUDA driver cannot use it: .*' "$log" || true)
  if [[ -z "$not_failed" && "$failed" -gt 0 ]]; then
    echo "stub driver ($failure): all $failed GPU tests failed, as they must; e.g. $reason"
  else
    echo "stub driver ($failure): $failed GPU tests failed; these did not (skipped or passed):"
    echo "$not_failed"
    status=1
  fi
  rm -f "$log"
done
exit $status
