#!/usr/bin/env bash
# Training through swr.torch on a lent GPU (issue 28), from the current tree, in one device call:
#
#   bench/training_device_run.sh stage [BUILD_DIR] [DEST]   # build machine: stripped swr-tune and
#       libswr_runtime.so, python/swr with its compiled hot path, the training tests and benches
#       (DEST: .device/training)
#   OUT=$OUT bash DEST/run.sh                               # GPU machine
#
# 1. Tunes the forward and the backward of the GPU tests' shapes (D=64, f16 and bf16, causal and
#    not; GQA 8 over 2 K/V heads) over a few variants of each pass (deterministic dQ among them);
#    runs tests/python/test_swr_torch_training.py (gradients against SDPA's math path in fp32,
#    deterministic bit for bit, torch.compile(fullgraph=True) and CUDA-graph training steps).
# 2. Tunes the small GPT's shape (B=8 H=12 S=2048 D=64 causal bf16), both passes, --model-top 10,
#    timed; trains the GPT 300 steps three times (swr, cuDNN, FlashAttention-2: same init, same
#    batches) with bench/gpt_training.py; one fwd+bwd step head to head (bench/training_step.py).
# Each step has a time limit and logs its exit code (bench/device_steps.sh); TESTS_ONLY=1 stops
# after part 1.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [[ ${1:-} == stage ]]; then
  build=${2:-build}
  dest=${3:-.device/training}
  repo=$(git -C "$here" rev-parse --show-toplevel)
  rm -rf "$dest" && mkdir -p "$dest/bin" "$dest/lib" "$dest/bench" "$dest/tests/python"
  strip -o "$dest/bin/swr-tune" "$build/swr-tune"
  source "$here/device_steps.sh"
  stage_swr_package "$build" "$repo" "$dest"
  cp "$repo"/bench/{gpt_training,training_step,device_timing}.py "$dest/bench/"
  cp "$repo"/tests/python/test_swr_torch_training.py "$dest/tests/python/"
  cp "$0" "$dest/run.sh" && cp "$here/device_steps.sh" "$dest/"
  git -C "$repo" rev-parse HEAD > "$dest/COMMIT"
  du -sh "$dest"
  exit 0
fi

OUT=${OUT:?OUT: where the results go}
W=$(mktemp -d /tmp/swr-training.XXXXXX)
mkdir -p "$W/logs"
export PYTHONUNBUFFERED=1 SWR_RUNTIME_LIBRARY=$here/lib/libswr_runtime.so
export SWR_CACHE_DIR=$W/cubins HOME=$W/home SWR_TUNE_PATH=$here/bin/swr-tune SWR_DB=
mkdir -p "$HOME"
STEPS=$W/steps.txt DEADLINE=${DEADLINE:-570}
source "$here/device_steps.sh"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)'
  cat "$here/COMMIT"
} > "$W/env.txt" 2>&1
finish() {
  rm -rf "$W/cubins" "$W/home"
  cp "$STEPS" "$OUT/training-steps.txt"
  tar -C "$W" -czf "$OUT/training.tar.gz" .
  cat "$STEPS"
}
trap finish EXIT

DB=$W/catalog.db
FORWARD=() BACKWARD=()
for key in m128n64w4s2-cyclic-grid-head_major m128n64w8s2-cyclic-dynamic-head_major \
  wgmma-m128n128s2-ov-pp-cyclic-dynamic-head_major; do
  FORWARD+=(--config "$key")
done
# Atomic dQ (two walks, two persistence modes, two tiles) and a deterministic dQ, on both
# instruction paths (the wgmma ones need an H100/H200, which this run is for).
for key in bwd-m64n128w8s2-cyclic-grid-head_major bwd-m64n128w8s2-sawtooth-dynamic-head_major \
  bwd-m32n64w4s2-cyclic-grid-head_major bwd-m64n128w8s2-cyclic-grid-head_major-det \
  bwd-wgmma-m128n128w8s2-cyclic-grid-head_major bwd-wgmma-m128n128w8s2-sawtooth-dynamic-head_major \
  bwd-wgmma-m128n128w8s2-cyclic-grid-head_major-det; do
  BACKWARD+=(--config "$key")
done
tune() {  # tune NAME SECONDS ARGS...: both passes of a shape
  local name=$1 limit=$2
  shift 2
  step "tune forward $name" "$limit" "$W/logs/tune_fwd_$name.log" "$here/bin/swr-tune" \
    --gpu auto "$@" "${FORWARD[@]}" --db "$DB" -j 16
  step "tune backward $name" "$limit" "$W/logs/tune_bwd_$name.log" "$here/bin/swr-tune" \
    --family attention-backward --gpu auto "$@" "${BACKWARD[@]}" --db "$DB" -j 16
}
tune b2_h4_s512_f16 60 --batch 2 --heads 4 --seq 512 --head-dim 64 --both
tune b2_h4_s512_bf16 60 --batch 2 --heads 4 --seq 512 --head-dim 64 --dtype bf16 --both
tune b2_h8_kv2_s300_f16 60 --batch 2 --heads 8 --kv-heads 2 --seq 300 --head-dim 64 --causal
"$here/bin/swr-tune" show --gpu h200 --db "$DB" > "$W/logs/show_tests.txt" 2>&1
"$here/bin/swr-tune" show --family attention-backward --gpu h200 --db "$DB" \
  >> "$W/logs/show_tests.txt" 2>&1

(cd "$here/tests/python" && step "pytest training" 150 "$W/logs/pytest_training.log" \
  env SWR_TORCH_TEST_CATALOG="$DB" PYTHONPATH="$here/python" python3 -m pytest -q -rs \
  -p no:cacheprovider test_swr_torch_training.py)
echo "pytest training: $(tail -1 "$W/logs/pytest_training.log")" >> "$STEPS"

# TESTS_ONLY=1: the tests' part alone.
[[ ${TESTS_ONLY:-0} == 1 ]] && exit 0
GPT=(--batch 8 --heads 12 --seq 2048 --head-dim 64 --dtype bf16 --causal)
step "tune forward gpt --model-top 10" 90 "$W/logs/tune_fwd_gpt.log" "$here/bin/swr-tune" \
  --gpu auto "${GPT[@]}" --model-top 10 --db "$DB" -j 16
step "tune backward gpt --model-top 10" 90 "$W/logs/tune_bwd_gpt.log" "$here/bin/swr-tune" \
  --family attention-backward --gpu auto "${GPT[@]}" --model-top 10 --db "$DB" -j 16
"$here/bin/swr-tune" show --gpu h200 --db "$DB" "${GPT[@]}" > "$W/logs/show_gpt.txt" 2>&1
"$here/bin/swr-tune" show --family attention-backward --gpu h200 --db "$DB" "${GPT[@]}" \
  >> "$W/logs/show_gpt.txt" 2>&1
cp "$DB" "$W/catalog-after-gpt.db"

cd "$here/bench" || exit 1
step "training step gpt shape" 60 "$W/logs/training_step.log" env PYTHONPATH="$here/python" \
  python3 training_step.py --points 8x12x2048x64-causal --catalog "$DB" \
  --out "$W/training_step.json"
step "gpt 300 steps x 3" 200 "$W/logs/gpt.log" env PYTHONPATH="$here/python" \
  python3 gpt_training.py --catalog "$DB" --out "$W/gpt.json"
cp "$W"/*.json "$OUT/" 2>/dev/null
