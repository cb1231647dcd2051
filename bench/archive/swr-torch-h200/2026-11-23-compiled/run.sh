#!/bin/bash
# Issue 15: host overhead of one swr.torch.attention call with the compiled hot path (H200, one
# call, about 3 minutes; every step has a time limit, and the whole stays under BUDGET=230 s).
#   cd .device/torch-15 && bash run.sh          (in a copy of main; $OUT set by the device tool)
# From what stage.sh staged on the CPU machine (branch torch-15; COMMIT: the branch, then main):
# tunes a small catalog (the pytest shapes and B=16 H=8 S=777 D=64 f16, 4 variants each, into a
# copy of main's H200 GEMM database); runs the runtime's GPU tests, the hot-path tests of both
# implementations on this machine's Python (the abi3 extension built with 3.11 loaded by 3.12),
# the pytest GPU suite of swr.torch once per hot path (SWR_HOT_PATH=compiled, then python), and
# the overhead benchmark three rounds of compiled / python / before (main's python/ and benchmark),
# each in a process of its own; the branch's benchmark also times both hot paths interleaved in
# one process (host_compiled_us, host_python_us). Each step logs its exit code; a failing step
# does not stop the others. Back: summary.txt (the table), steps.txt, overhead_all.json, logs.tgz.
set -u
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MAIN=$(cd "$D/../.." && pwd)  # the copy of main this folder sits in
OUT=${OUT:-$D/out}
mkdir -p "$OUT/logs" "$OUT/logs/json"
export PYTHONUNBUFFERED=1 SWR_RUNTIME_LIBRARY="$D/lib/libswr_runtime.so"
export SWR_CACHE_DIR=/tmp/swr-cubins-t15 HOME=/tmp/home-t15 SWR_SOURCE_DIR="$MAIN"
export SWR_TUNE_PATH="$D/bin/swr-tune"
mkdir -p "$HOME"
START=$SECONDS
BUDGET=${BUDGET:-230}
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
# test_swr_hot_path.py reads the GEMM database from its repository (here: this folder).
mkdir -p "$D/bench/results" && ln -sfn "$MAIN/bench/results/gemm-sweep-h200" "$D/bench/results/gemm-sweep-h200"
SMALL=(--config m128n64w4s2-cyclic-grid-head_major --config m128n64w4s2-cyclic-dynamic-head_major
       --config m128n64w8s2-cyclic-grid-head_major --config m128n64w8s2-cyclic-dynamic-head_major)
step tune_b2_h4_s512_f16 60 "$D/bin/swr-tune" --gpu auto --batch 2 --heads 4 --seq 512 --both "${SMALL[@]}" --db $DB -j 16
step tune_b2_h4_s512_bf16 60 "$D/bin/swr-tune" --gpu auto --batch 2 --heads 4 --seq 512 --dtype bf16 --both "${SMALL[@]}" --db $DB -j 16
step tune_b16_h8_s777 60 "$D/bin/swr-tune" --gpu auto --batch 16 --heads 8 --seq 777 "${SMALL[@]}" --db $DB -j 16

step runtime_gpu_test 60 "$D/bin/runtime_gpu_test" '--gtest_filter=RuntimeOnGpu.*:-RuntimeOnGpu.TheExample*'
step hot_path_tests 30 env SWR_TEST_HOT_PATHS=compiled,python bash -c "cd '$D/tests/python' && PYTHONPATH='$D/python' python3 -m pytest -q -rs -p no:cacheprovider test_swr_hot_path.py"
for path in compiled python; do
  step "pytest_$path" 90 env SWR_HOT_PATH=$path SWR_TORCH_TEST_CATALOG=$DB bash -c "cd '$D/tests/python' && PYTHONPATH='$D/python' python3 -m pytest -q -rs -p no:cacheprovider test_swr_torch.py test_swr_inputs.py"
done

overhead() {  # overhead NAME PACKAGE_DIR [VARIABLE=VALUE...] -- [BENCHMARK OPTIONS...]
  local name=$1 dir=$2; shift 2
  local variables=()
  while (($#)) && [[ $1 != -- ]]; do variables+=("$1"); shift; done
  shift
  step "$name" 40 env PYTHONPATH="$dir/python:$dir/bench" ${variables[@]+"${variables[@]}"} python3 "$dir/bench/swr_torch_overhead.py" --catalog $DB --out "$OUT/logs/json/$name.json" "$@"
}
for round in 1 2 3; do
  overhead "compiled$round" "$D" SWR_HOT_PATH=compiled -- --launch-benchmark "$D/bin/swr_launch_overhead"
  overhead "python$round" "$D" SWR_HOT_PATH=python --
  overhead "before$round" "$D/before" --
done

python3 - "$OUT" <<'PYTHON' | tee "$OUT/summary.txt"
import glob, json, os, sys
out = sys.argv[1]
print(open(os.path.join(out, "steps.txt")).read().rstrip())
docs = {}
for path in sorted(glob.glob(os.path.join(out, "logs", "json", "*.json"))):
    try:
        docs[os.path.basename(path)[:-5]] = json.load(open(path))
    except ValueError:
        pass
with open(os.path.join(out, "overhead_all.json"), "w") as f:
    json.dump(docs, f, indent=1)
runs = [f"{kind}{r}" for r in (1, 2, 3) for kind in ("compiled", "python", "before")]
rows = ["host_us", "host_compiled_us", "host_python_us", "c_launch_us", "c_floor_us",
        "c_floor_zeroed_us", "kernel_us", "sdpa_host_us", "eager_device_us"]
print("\nus per call (medians)  " + " ".join(f"{r:>10}" for r in runs))
for row in rows:
    cells = []
    for run in runs:
        value = docs.get(run, {}).get("figures_us", {}).get(row)
        cells.append(f"{value:10.2f}" if value is not None else "         -")
    print(f"{row:23s}" + " ".join(cells))
cells = []
for run in runs:
    figures = docs.get(run, {}).get("figures_us", {})
    cells.append(f"{figures['host_us'] / figures['sdpa_host_us']:10.3f}" if figures else "         -")
print(f"{'host_us / sdpa_host_us':23s}" + " ".join(cells))
print("hot path of host_us:   " + " ".join(f"{docs.get(r, {}).get('hot_path') or '-':>10}" for r in runs))
for run in ("compiled1", "python1", "compiled2"):
    d = docs.get(run)
    if d:
        print(f"{run}: split {json.dumps({k: round(v, 2) for k, v in d.get('split_us', {}).items()})}")
        print(f"{run}: c_side {json.dumps(d.get('c_side_us'))}")
        print(f"{run}: breakdown {json.dumps({k: round(v, 2) for k, v in d.get('breakdown_us', {}).items()})}")
PYTHON
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
echo "total $((SECONDS - START))s" | tee -a "$OUT/steps.txt"
