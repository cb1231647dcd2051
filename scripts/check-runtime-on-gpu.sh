#!/usr/bin/env bash
# The runtime end to end on a GPU machine, from binaries built elsewhere (the GPU machine has no
# compilers or development packages):
#
#   scripts/check-runtime-on-gpu.sh stage [BUILD_DIR]   # on the build machine: copies swr-tune,
#                                                       # the examples and the runtime tests into
#                                                       # build-runtime-gpu/ (BUILD_DIR: build)
#   OUT=results/ scripts/check-runtime-on-gpu.sh        # on the GPU machine
#
# On the GPU: a small real tune of two attention shapes and one GEMM shape (and on an sm_90a GPU
# a wgmma GEMM shape), query (exact and
# nearest, both families), export, the examples run from the export with NVRTC turned off (and,
# where this shell may make a mount namespace, with every libnvrtc hidden), the examples from the
# database through the cubin cache, and the runtime test programs (GPU and CPU). Each step's output goes to $OUT/<step>.log (OUT defaults to
# runtime-check/), and one PASS or FAIL line per step to stdout and $OUT/summary.txt. The exit
# code is 1 when any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."

BINARIES=(swr-tune examples/swr_attention_example examples/swr_gemm_example
          tests/gpu/runtime_gpu_test tests/runtime/runtime_tests)

if [[ "${1:-}" == "stage" ]]; then
  build=${2:-build}
  mkdir -p build-runtime-gpu
  for binary in "${BINARIES[@]}"; do cp "$build/$binary" build-runtime-gpu/; done
  ls -l build-runtime-gpu
  exit 0
fi

BIN=${BIN:-build-runtime-gpu}
OUT=${OUT:-runtime-check}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BIN=$(cd "$BIN" && pwd)
SWR="$BIN/swr-tune"
EXAMPLE="$BIN/swr_attention_example"
GEMM_EXAMPLE="$BIN/swr_gemm_example"
# The test programs find these through the environment (their built-in paths are elsewhere).
export SWR_TUNE_PATH="$SWR" SWR_EXAMPLE_PATH="$EXAMPLE" SWR_GEMM_EXAMPLE_PATH="$GEMM_EXAMPLE"
# A fresh cubin cache and database: nothing from an earlier run counts.
export SWR_CACHE_DIR="$OUT/cubins"
DB="$OUT/results.db"
rm -rf "$SWR_CACHE_DIR" "$DB" "$OUT/export" "$OUT/summary.txt"

failed=0
# step NAME COMMAND...: runs it with its output in $OUT/NAME.log; PASS when it exits 0.
step() {
  local name=$1
  shift
  if "$@" >"$OUT/$name.log" 2>&1; then
    echo "PASS $name" | tee -a "$OUT/summary.txt"
  else
    echo "FAIL $name (exit $?, see $name.log)" | tee -a "$OUT/summary.txt"
    failed=1
  fi
}
# expect NAME TEXT...: PASS when $OUT/NAME.log holds every TEXT.
expect() {
  local name=$1
  shift
  for text in "$@"; do
    if ! grep -qF -- "$text" "$OUT/$name.log"; then
      echo "FAIL $name: no '$text' in $name.log" | tee -a "$OUT/summary.txt"
      failed=1
    fi
  done
}

A=(--batch 2 --heads 4 --seq 2048)                          # d64 f16, not causal
A_NEAR=(--batch 2 --heads 4 --seq 3000)
B=(--batch 1 --heads 2 --seq 1024 --seq-kv 1536 --head-dim 128 --dtype bf16 --causal)
G=(--family gemm --m 1000 --n 1016 --k 264)                 # GEMM f16, tails in M, N and K
G_NEAR=(--family gemm --m 777 --n 1024 --k 512)
# On an sm_90a GPU (H100/H200) also a wgmma GEMM: bf16, tails in M, N and K, two variants (a 1x2
# cluster multicasting A, stream-K in a 2x1 cluster); the tune keeps the faster.
W=(--family gemm --m 777 --n 3000 --k 1032 --dtype bf16)
W_KEYS=(--config wgmma-m128n256k64s3-cooperative-c1x2-static-swz0
        --config wgmma-m128n256k64s3-cooperative-c2x1-streamk-swz0)
wgmma=0
[[ $(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1) == 9.0 ]] &&
  wgmma=1

step gpus "$SWR" gpus
step tune_a "$SWR" --gpu auto "${A[@]}" --limit 8 --db "$DB"
step tune_b "$SWR" --gpu auto "${B[@]}" --limit 6 --db "$DB"
step tune_gemm "$SWR" --gpu auto "${G[@]}" --limit 6 --db "$DB"
if ((wgmma)); then
  step tune_gemm_wgmma "$SWR" --gpu auto "${W[@]}" "${W_KEYS[@]}" --db "$DB"
else
  echo "SKIP tune_gemm_wgmma (not an sm_90a GPU)" | tee -a "$OUT/summary.txt"
fi
step query_exact "$SWR" query --gpu auto "${A[@]}" --db "$DB"
expect query_exact ": exact"
step query_nearest "$SWR" query --gpu auto "${A_NEAR[@]}" --db "$DB"
expect query_nearest ": nearest (tuned shape b2_h4_sq2048_skv2048_d64_f16_noncausal"
step query_gemm_exact "$SWR" query --gpu auto "${G[@]}" --db "$DB"
expect query_gemm_exact "m1000_n1016_k264_f16 on" ": exact"
step query_gemm_nearest "$SWR" query --gpu auto "${G_NEAR[@]}" --db "$DB"
expect query_gemm_nearest ": nearest (tuned shape m1000_n1016_k264_f16"
step export "$SWR" export --gpu auto --db "$DB" --out "$OUT/export"
if ((wgmma)); then
  expect export "exported 4 shapes (2 attention, 0 attention-backward, 2 GEMM"
else
  expect export "exported 3 shapes (2 attention, 0 attention-backward, 1 GEMM"
fi
step query_gemm_export "$SWR" query --gpu auto "${G[@]}" --export "$OUT/export"
expect query_gemm_export ": exact"

# From the export, NVRTC off: whatever is not exported is refused, nothing is compiled.
example_from_export() {
  local name=example_export_$1
  shift
  step "$name" env SWR_RUNTIME_NVRTC=0 "$EXAMPLE" --export "$OUT/export" --require-gpu "$@"
  expect "$name" "cubin: export" ": PASS" "nvrtc loaded: no"
}
example_from_export A "${A[@]}"
expect example_export_A "lookup: exact"
example_from_export A_NEAR "${A_NEAR[@]}"
expect example_export_A_NEAR "lookup: nearest"
example_from_export B "${B[@]}"
# The GEMM example, likewise (its arguments without --family).
gemm_example_from_export() {
  local name=gemm_example_export_$1
  shift
  step "$name" env SWR_RUNTIME_NVRTC=0 "$GEMM_EXAMPLE" --export "$OUT/export" --require-gpu "$@"
  expect "$name" "cubin: export" ": PASS" "nvrtc loaded: no"
}
gemm_example_from_export G "${G[@]:2}"
expect gemm_example_export_G "lookup: exact"
gemm_example_from_export G_NEAR "${G_NEAR[@]:2}"
expect gemm_example_export_G_NEAR "lookup: nearest"
if ((wgmma)); then
  gemm_example_from_export W "${W[@]:2}"
  expect gemm_example_export_W "lookup: exact" "wgmma-m128n256k64s3-cooperative-c"
fi

# NVRTC truly unavailable: every libnvrtc file covered by /dev/null in a private mount namespace
# (needs root and permission to unshare; skipped, and said so, where the sandbox forbids it).
mapfile -t nvrtc_files < <(ls /usr/local/cuda*/lib64/libnvrtc.so* \
  /usr/local/cuda*/targets/*/lib/libnvrtc.so* 2>/dev/null; ldconfig -p 2>/dev/null |
  awk '/libnvrtc\.so/ {print $NF}')
if [[ $(id -u) == 0 ]] && unshare --mount true 2>/dev/null; then
  hide="for f in ${nvrtc_files[*]}; do mount --bind /dev/null \"\$f\"; done"
  step nvrtc_hidden_compile_fails unshare --mount sh -c "$hide; ! \"$SWR\" compile --gpu h200 \
    --seq 1024 --limit 1 --cache-dir \"$OUT/empty-cache\""
  expect nvrtc_hidden_compile_fails "NVRTC"
  step example_nvrtc_hidden unshare --mount sh -c "$hide; exec \"$EXAMPLE\" --export \
    \"$OUT/export\" --require-gpu ${A_NEAR[*]}"
  expect example_nvrtc_hidden "cubin: export" ": PASS" "nvrtc loaded: no"
  if ((wgmma)); then
    step gemm_example_nvrtc_hidden unshare --mount sh -c "$hide; exec \"$GEMM_EXAMPLE\" --export \
      \"$OUT/export\" --require-gpu ${W[*]:2}"
    expect gemm_example_nvrtc_hidden "cubin: export" ": PASS" "nvrtc loaded: no" "wgmma-"
  fi
else
  echo "SKIP example_nvrtc_hidden (no mount namespace here; SWR_RUNTIME_NVRTC=0 runs above)" |
    tee -a "$OUT/summary.txt"
fi

# From the database: the measured cubins come from the cubin cache the tune filled.
step example_database "$EXAMPLE" --db "$DB" --require-gpu "${B[@]}"
expect example_database "lookup: exact" "cubin: cubin cache" ": PASS"
step gemm_example_database "$GEMM_EXAMPLE" --db "$DB" --require-gpu "${G[@]:2}"
expect gemm_example_database "lookup: exact" "cubin: cubin cache" ": PASS"
if ((wgmma)); then
  step gemm_example_database_W "$GEMM_EXAMPLE" --db "$DB" --require-gpu "${W[@]:2}"
  expect gemm_example_database_W "lookup: exact" "cubin: cubin cache" ": PASS" "wgmma-"
fi

step runtime_gpu_test "$BIN/runtime_gpu_test"
step runtime_tests "$BIN/runtime_tests"

echo "logs in $OUT"
exit $failed
