#!/bin/bash
# Issue 15, last gap: host overhead of one swr.torch.attention call (H200, one call, ~3-5 minutes).
#   cd .device/torch-15 && bash run.sh          (in a copy of main; $OUT set by the device tool)
# From binaries built on the CPU machine (branch torch-15, staged here by stage.sh): tunes a small
# catalog (the pytest shapes and B=16 H=8 S=777 D=64 f16, 4 variants each, into a copy of main's
# H200 GEMM database), runs the runtime's GPU tests (the pooled tile counters among them), the
# pytest GPU suite of swr.torch, and the overhead benchmark after (this branch) and before (main's
# python/ and benchmark) alternately, twice each, the after runs with the C side timed from C++,
# and an experiment: the eager runner compiled (experiment/).
# Every step has a time limit, logs its exit code and the script goes on past a failing step.
set -u
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MAIN=$(cd "$D/../.." && pwd)  # the copy of main this folder sits in
OUT=${OUT:-$D/out}
mkdir -p "$OUT/logs"
export PYTHONUNBUFFERED=1 SWR_RUNTIME_LIBRARY="$D/lib/libswr_runtime.so"
export SWR_CACHE_DIR=/tmp/swr-cubins-t15 HOME=/tmp/home-t15 SWR_SOURCE_DIR="$MAIN"
export SWR_TUNE_PATH="$D/bin/swr-tune"
mkdir -p "$HOME"
START=$SECONDS
BUDGET=${BUDGET:-480}  # no step runs past this many seconds from the start (the call's limit is 540)
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  local start=$SECONDS left=$((BUDGET - SECONDS + START))
  if ((left < 8)); then echo "$name skipped (budget)" | tee -a "$OUT/steps.txt"; return; fi
  ((limit > left)) && limit=$left
  timeout "$limit" "$@" > "$OUT/logs/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - start))s" | tee -a "$OUT/steps.txt"
}
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)'
  lscpu | grep -E "Model name|^CPU\(s\)|MHz" ; } > "$OUT/logs/env.txt" 2>&1

DB=/tmp/t15-tuned.db
cp "$MAIN/bench/results/gemm-sweep-h200/gemm.db" $DB
SMALL=(--config m128n64w4s2-cyclic-grid-head_major --config m128n64w4s2-cyclic-dynamic-head_major
       --config m128n64w8s2-cyclic-grid-head_major --config m128n64w8s2-cyclic-dynamic-head_major)
step tune_b2_h4_s512_f16 60 "$D/bin/swr-tune" --gpu auto --batch 2 --heads 4 --seq 512 --both "${SMALL[@]}" --db $DB -j 16
step tune_b2_h4_s512_bf16 60 "$D/bin/swr-tune" --gpu auto --batch 2 --heads 4 --seq 512 --dtype bf16 --both "${SMALL[@]}" --db $DB -j 16
step tune_b16_h8_s777 60 "$D/bin/swr-tune" --gpu auto --batch 16 --heads 8 --seq 777 "${SMALL[@]}" --db $DB -j 16

step runtime_gpu_test 120 "$D/bin/runtime_gpu_test" '--gtest_filter=RuntimeOnGpu.*:-RuntimeOnGpu.TheExample*'
step pytest 180 env SWR_TORCH_TEST_CATALOG=$DB bash -c "cd '$D/tests/python' && python3 -m pytest -q -rs -p no:cacheprovider test_swr_torch.py test_swr_inputs.py"

overhead() {  # overhead NAME PACKAGE_DIR [--launch-benchmark PROGRAM]
  local name=$1 dir=$2; shift 2
  step "$name" 60 env PYTHONPATH="$dir/python:$dir/bench" python3 "$dir/bench/swr_torch_overhead.py" --catalog $DB --out "$OUT/$name.json" "$@"
}
for round in 1 2; do
  overhead "overhead_after$round" "$D" --launch-benchmark "$D/bin/swr_launch_overhead"
  overhead "overhead_before$round" "$D/before"
done

# Experiment (not in the repository): the eager runner in C over the stable ABI, interleaved with
# the Python one (experiment/fastrun.c, built on the CPU machine against the 3.11 limited API).
step experiment_compiled_runner 90 env PYTHONPATH="$D/python:$D/experiment" python3 "$D/experiment/overhead_compiled.py" $DB "$OUT/experiment_compiled_runner.json"

tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
python3 - "$OUT" <<'PYTHON' | tee "$OUT/summary.txt"
import json, os, sys
out = sys.argv[1]
print(open(os.path.join(out, "steps.txt")).read().rstrip())
rows = ["host_us", "c_launch_us", "c_floor_us", "c_floor_zeroed_us", "kernel_us", "sdpa_host_us",
        "eager_device_us"]
runs = ["overhead_after1", "overhead_before1", "overhead_after2", "overhead_before2"]
docs = {}
for run in runs:
    try:
        docs[run] = json.load(open(os.path.join(out, run + ".json")))
    except (OSError, ValueError):
        docs[run] = None
print("\nus per call (medians)   " + " ".join(f"{r[9:]:>9}" for r in runs))
for row in rows:
    cells = [f"{d['figures_us'].get(row, float('nan')):9.2f}" if d else "        -" for d in docs.values()]
    print(f"{row:24s}" + " ".join(cells))
for run in ("overhead_after1", "overhead_after2"):
    d = docs[run]
    if d:
        print(f"{run}: split {json.dumps({k: round(v, 2) for k, v in d.get('split_us', {}).items()})}")
        print(f"{run}: c_side {json.dumps(d.get('c_side_us'))}")
        print(f"{run}: breakdown {json.dumps({k: round(v, 2) for k, v in d.get('breakdown_us', {}).items()})}")
try:
    print("experiment (us):", json.dumps(json.load(open(os.path.join(out, "experiment_compiled_runner.json")))))
except (OSError, ValueError) as error:
    print("experiment: no figures", error)
PYTHON
echo "total $((SECONDS - START))s"
