#!/usr/bin/env bash
# swr.torch on a lent GPU (issue 15), from the current tree, in one device call (~3 min):
#
#   bench/swr_torch_device_run.sh stage [BUILD_DIR] [DEST]   # build machine: stripped swr-tune,
#       runtime_gpu_test, swr_launch_overhead and libswr_runtime.so; python/swr with its compiled
#       hot path (the build tree's target swr_hotpath_ext, as the wheel builds it; abi3: built by
#       this machine's Python, loaded by the GPU machine's); the Python tests and benchmarks
#       (DEST: .device/swr-torch)
#   OUT=$OUT bash DEST/run.sh                                # GPU machine
#
# Tunes a small catalog for the tests' shapes (D=64 f16 and bf16, causal and not, GQA 8 over 2
# K/V heads, B=16 H=8 S=777) over mma_sync and wgmma variants, into a copy of the H200 GEMM sweep
# database (the GEMM tests' kernels); then the hot paths' tests, the pytest GPU suite once per
# hot path (SWR_HOT_PATH=compiled, then python) and the overhead benchmark, two rounds of each
# path in a process of its own. Each step has a time limit and logs its exit code.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [[ ${1:-} == stage ]]; then
  build=${2:-build}
  dest=${3:-.device/swr-torch}
  repo=$(git -C "$here" rev-parse --show-toplevel)
  rm -rf "$dest" && mkdir -p "$dest/bin" "$dest/lib" "$dest/bench/results" "$dest/tests/python"
  for program in swr-tune tests/gpu/runtime_gpu_test bench/swr_launch_overhead; do
    strip -o "$dest/bin/$(basename "$program")" "$build/$program"
  done
  source "$here/device_steps.sh"
  stage_swr_package "$build" "$repo" "$dest"
  cp "$repo"/bench/{swr_torch_overhead,swr_runtime}.py "$dest/bench/"
  # tests/python and bench/results as in the repository: the tests find the package and the GEMM
  # database from their own path.
  cp "$repo"/tests/python/test_swr_{torch,inputs,hot_path}.py "$dest/tests/python/"
  cp -r "$repo/bench/results/gemm-sweep-h200" "$dest/bench/results/"
  cp "$0" "$dest/run.sh" && cp "$here/device_steps.sh" "$dest/"
  git -C "$repo" rev-parse HEAD > "$dest/COMMIT"
  du -sh "$dest"
  exit 0
fi

OUT=${OUT:?OUT: where the results go}
W=$(mktemp -d /tmp/swr-torch.XXXXXX)
mkdir -p "$W/logs/json"
export PYTHONUNBUFFERED=1 SWR_RUNTIME_LIBRARY=$here/lib/libswr_runtime.so
export SWR_CACHE_DIR=$W/cubins HOME=$W/home SWR_TUNE_PATH=$here/bin/swr-tune SWR_DB=
mkdir -p "$HOME"
STEPS=$W/steps.txt DEADLINE=${DEADLINE:-240}
source "$here/device_steps.sh"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)'
  cat "$here/COMMIT"
} > "$W/env.txt" 2>&1

DB=$W/catalog.db
xz -dc "$here/bench/results/gemm-sweep-h200/gemm.db.xz" > "$DB"
CONFIGS=()
for key in m128n64w4s2-cyclic-grid-head_major m128n64w4s2-cyclic-dynamic-head_major \
  m128n64w8s2-cyclic-dynamic-head_major wgmma-m128n128s2-ov-pp-cyclic-dynamic-head_major \
  wgmma-m192n128s2-cyclic-grid-head_major; do
  CONFIGS+=(--config "$key")
done
tune() {  # tune NAME SHAPE...
  local name=$1
  shift
  step "tune $name" 50 "$W/logs/tune_$name.log" "$here/bin/swr-tune" --gpu auto "$@" \
    "${CONFIGS[@]}" --db "$DB" -j 16
}
tune b2_h4_s512_f16 --batch 2 --heads 4 --seq 512 --both
tune b2_h4_s512_bf16 --batch 2 --heads 4 --seq 512 --dtype bf16 --both
tune b2_h8_kv2_s300_f16 --batch 2 --heads 8 --kv-heads 2 --seq 300 --both
tune b16_h8_s777_f16 --batch 16 --heads 8 --seq 777
"$here/bin/swr-tune" show --gpu h200 --db "$DB" > "$W/logs/show.txt" 2>&1

step runtime_gpu_test 60 "$W/logs/runtime_gpu_test.log" "$here/bin/runtime_gpu_test" \
  '--gtest_filter=RuntimeOnGpu.*:-RuntimeOnGpu.TheExample*'
cd "$here/tests/python" || exit 1
step "hot path tests" 40 "$W/logs/hot_path_tests.log" env SWR_TEST_HOT_PATHS=compiled,python \
  PYTHONPATH="$here/python" python3 -m pytest -q -rs -p no:cacheprovider test_swr_hot_path.py
for path in compiled python; do
  step "pytest $path" 90 "$W/logs/pytest_$path.log" env SWR_HOT_PATH=$path \
    SWR_TORCH_TEST_CATALOG="$DB" PYTHONPATH="$here/python" python3 -m pytest -q -rs \
    -p no:cacheprovider test_swr_torch.py test_swr_inputs.py
  echo "pytest $path: $(tail -1 "$W/logs/pytest_$path.log")" >> "$STEPS"
done
cd "$here" || exit 1
for round in 1 2; do
  for path in compiled python; do
    step "overhead $path $round" 40 "$W/logs/overhead_$path$round.log" env SWR_HOT_PATH=$path \
      PYTHONPATH="$here/python:$here/bench" python3 "$here/bench/swr_torch_overhead.py" \
      --catalog "$DB" --out "$W/logs/json/$path$round.json" \
      --launch-benchmark "$here/bin/swr_launch_overhead"
  done
done
python3 - "$W" >> "$STEPS" <<'PYTHON'
import glob, json, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "logs", "json", "*.json"))):
    try:
        doc = json.load(open(path))
    except ValueError:
        continue
    figures = doc.get("figures_us", {})
    print(os.path.basename(path)[:-5], "hot path", doc.get("hot_path"), "host_us",
          round(figures.get("host_us", float("nan")), 2), "kernel_us",
          round(figures.get("kernel_us", float("nan")), 2))
PYTHON
rm -rf "$W/cubins" "$W/home"
cp "$STEPS" "$OUT/swr-torch-steps.txt"
tar -C "$W" -czf "$OUT/swr-torch.tar.gz" .
cat "$STEPS"
