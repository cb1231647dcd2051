#!/usr/bin/env bash
# Issue 13's last gap, ragged GEMM shapes >= 0.9x cuBLAS, on the H200 in one device call. Call 6:
# tile widths that are not multiples of 64 (144 .. 240, static 2x2 clusters), so that a ragged N
# divides into whole waves of the 30 co-resident 2x2 clusters. Call 7: transposed variants (C^T =
# B^T A^T), whose widths run along a ragged M (7000x3000x5000).
#
#   bench/gemm_ragged_device_run.sh stage [BUILD_DIR] [DEST]   # build machine: stripped swr-tune,
#       gemm_kernel_gpu_test and gemm_performance_gpu_test in DEST/bin.tar.xz, the tune key lists
#       (DEST/keys_MxNxK.txt, from swr-tune space), this script as DEST/run.sh beside
#       bench/device_steps.sh, and bench/gemm_ragged_summary.py as DEST/summary.py
#       (DEST: /work/main/.device/ragged-13)
#   cd DEST && OUT=... bash run.sh                              # GPU machine (nvidia-h200), ~4 min
#
# run.sh, each step with its own timeout, none past $BUDGET seconds (280; the tunes stop 60 s
# before), every exit code logged:
#   A (GPU shared, ~30 s): gemm_kernel_gpu_test's wgmma cases on odd sizes (call 7: the transposed
#     ones); compute-sanitizer racecheck and synccheck on coop 128x176 c2x2 static (f16: the part
#     chunk stored directly), its transposed twin (bf16) and transposed pingpong 128x128 c1x2.
#   B (alone, ~3 min): per shape swr-tune over keys_MxNxK.txt (the transposed 2x2 tiles, static
#     2x2 of every cooperative tile, static 2x1 of the three big tiles and 256x128 1x2, each at
#     every stride; then every binary at stride 0; cuBLAS in the same run), then query and show.
#     A width family (or the transposed kind) whose correctness cases failed in A is left out.
#   C (alone, ~15 s): gemm_performance_gpu_test, flushed L2, launches in turn: per shape the tuned
#     best vs cuBLAS and vs a baseline from the same tune: the best variant of the other product
#     order (transposed or not) than the choice.
#   D (alone, ~15 s): ncu L2 requests and sectors of the chosen kernel, the previous best and
#     cuBLAS's own kernel at 7000x3000x5000 bf16.
#   Last: the summary (also $OUT/summary.txt), its table at the very end; logs, the database and
#   ncu CSVs in $OUT/logs.tar.gz.
set -uo pipefail

# m n k dtype tune-seconds previous-best (round 1's choice, or for a shape it did not tune the
# twin of round 1's 3000x7000x5000 choice), most telling first: $BUDGET may cut the tail.
# (Call 6's list: 3000x7000x5000 bf16/f16, 7000x3000x5000 bf16, 5000x3000x7000 f16/bf16,
# 6000x5000x4000 f16, 5120x3072x7168 f16, 4000x6000x5000 f16; its previous bests were call 5's.)
SHAPES=(
  "7000 3000 5000 bf16 35 wgmma-m128n256k64s3-cooperative-c2x2-static-swz0"
  "7000 3000 5000 f16 35 wgmma-m128n256k64s3-cooperative-c2x2-static-swz0"
  "5000 3000 7000 f16 25 wgmma-m128n256k64s3-cooperative-c2x2-static-swz0"
  "6000 5000 4000 f16 25 wgmma-m128n256k64s3-cooperative-c2x2-static-swzm1536"
  "3000 7000 5000 bf16 20 wgmma-m128n176k64s4-cooperative-c2x2-static-swzm1536"
)

if [[ ${1:-} == stage ]]; then
  build=${2:-build}
  dest=${3:-/work/main/.device/ragged-13}
  staging=$(mktemp -d)
  trap 'rm -rf "$staging"' EXIT
  for program in "$build/swr-tune" "$build/tests/gpu/gemm_kernel_gpu_test" \
    "$build/tests/gpu/gemm_performance_gpu_test"; do
    [[ -x $program ]] || { echo "missing $program" >&2; exit 1; }
    strip -o "$staging/$(basename "$program")" "$program"
  done
  mkdir -p "$dest"
  rm -f "$dest"/keys_*.txt
  tar -C "$staging" -cJf "$dest/bin.tar.xz" .
  # The tune's key list per shape, most telling first: static 2x2 of every cooperative tile (the
  # widths that are not multiples of 64 first), static 2x1 of the three big tiles and 256x128
  # 1x2, each at every stride; then every binary at stride 0.
  for entry in "${SHAPES[@]}"; do
    read -r m n k _ <<< "$entry"
    [[ -f $dest/keys_${m}x${n}x${k}.txt ]] && continue
    space=$("$build/swr-tune" space --family gemm --gpu h200 --m "$m" --n "$n" --k "$k" |
      awk '$1 ~ /^wgmma-/ {print $1}')
    {
      grep -- "-cooperative-c2x2-transposed-static-" <<< "$space"
      grep -E -- "^wgmma-m128n(144|160|176|208|224|240)k64s[34]-cooperative-c2x2-static-" <<< "$space"
      for tile in m128n256k64s3 m256n128k64s3 m128n192k64s4 m128n128k64s4; do
        grep "^wgmma-$tile-cooperative-c2x2-static-" <<< "$space"
      done
      for tile in m128n256k64s3 m256n128k64s3 m128n192k64s4; do
        grep "^wgmma-$tile-cooperative-c2x1-static-" <<< "$space"
      done
      grep -- "^wgmma-m256n128k64s3-cooperative-c1x2-static-" <<< "$space"
      grep -- "-swz0$" <<< "$space"
    } | awk '!seen[$0]++' > "$dest/keys_${m}x${n}x${k}.txt"
    echo "keys_${m}x${n}x${k}.txt: $(wc -l < "$dest/keys_${m}x${n}x${k}.txt") keys"
  done
  cp "$0" "$dest/run.sh"
  cp "$(dirname "$0")/device_steps.sh" "$dest/"
  cp "$(dirname "$0")/gemm_ragged_summary.py" "$dest/summary.py"
  du -sh "$dest"
  exit 0
fi

D=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/ragged-13-out}
BUDGET=${BUDGET:-280}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$OUT/work  # packed into logs.tar.gz at the end
BIN=/tmp/ragged-13-bin
rm -rf "$BIN" "$W" && mkdir -p "$BIN" "$W/tests" "$W/san" "$W/tune" "$W/ncu" "$W/home"
tar -C "$BIN" -xJf "$D/bin.tar.xz"
export HOME=$W/home SWR_CACHE_DIR=/tmp/ragged-13-cubins
DB=$W/ragged.db
STEPS=$W/steps.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv \
  > "$W/gpu.txt" 2>&1
SANITIZER=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)

DEADLINE=${DEADLINE:-$BUDGET}  # no step past it (the tunes set their own, 60 s before)
source "$D/device_steps.sh"    # step NAME SECONDS LOG COMMAND...

# ---- A: correctness and sanitizers, in parallel (the GPU is shared; nothing is timed) ----------
cases=$("$BIN/gemm_kernel_gpu_test" --gtest_list_tests |
  sed -n 's/^ *MatchesReferenceOnOddSizes\/\(wgmma_[^ ]*\).*/\1/p')
for c in $cases; do
  step "test $c" 90 "$W/tests/$c.log" "$BIN/gemm_kernel_gpu_test" \
    --gtest_filter="*MatchesReferenceOnOddSizes/$c" &
done
for c in wgmma_m128n176k64s4_cooperative_c2x2_static_swz0_f16 \
  wgmma_m128n176k64s4_cooperative_c2x2_transposed_static_swz0_bf16 \
  wgmma_m128n128k64s4_pingpong_c1x2_transposed_static_swz0_bf16; do
  for tool in racecheck synccheck; do
    step "$tool $c" 90 "$W/san/$tool-$c.log" "$SANITIZER" --tool "$tool" --print-limit 20 \
      "$BIN/gemm_kernel_gpu_test" --gtest_filter="*MatchesReferenceOnOddSizes/$c" &
  done
done
wait
echo "phase A done at ${SECONDS}s" >> "$STEPS"
# A new width whose correctness case failed is not tuned (nor timed).
drop='^$'
for width in 144 160 176 208 224 240; do
  for log in "$W"/tests/wgmma_m128n${width}k64*.log; do
    grep -q "\[  PASSED  \] 1 test\." "$log" 2> /dev/null || { drop="$drop|-m128n${width}k64"; break; }
  done
done
for log in "$W"/tests/wgmma_*transposed*.log; do
  grep -q "\[  PASSED  \] 1 test\." "$log" 2> /dev/null || { drop="$drop|-transposed-"; break; }
done
echo "left out of the tunes: $drop" >> "$STEPS"

# ---- B: tunes, alone on the GPU -----------------------------------------------------------------
H2H=""
for entry in "${SHAPES[@]}"; do
  read -r m n k dtype seconds previous <<< "$entry"
  tag=${m}x${n}x${k}_$dtype
  mapfile -t keys < <(grep -Ev -- "$drop" "$D/keys_${m}x${n}x${k}.txt")
  args=()
  for key in "${keys[@]}"; do args+=(--config "$key"); done
  # The tunes leave the head to head and ncu their last 60 seconds.
  DEADLINE=$((BUDGET - 60)) step "tune $tag (${#keys[@]} keys)" $((seconds + 30)) \
    "$W/tune/$tag.log" "$BIN/swr-tune" tune \
    --family gemm --m "$m" --n "$n" --k "$k" --dtype "$dtype" --gpu h200 --db "$DB" \
    --time-budget "$seconds" "${args[@]}"
  "$BIN/swr-tune" query --family gemm --m "$m" --n "$n" --k "$k" --dtype "$dtype" --gpu h200 \
    --db "$DB" > "$W/tune/$tag.query" 2>&1
  "$BIN/swr-tune" show --family gemm --m "$m" --n "$n" --k "$k" --dtype "$dtype" --gpu h200 \
    --db "$DB" > "$W/tune/$tag.show" 2>&1
  tuned=$(awk '$1 == "variant" {print $2; exit}' "$W/tune/$tag.query")
  [[ -n $tuned ]] || continue
  # The baseline: the tune's best of the other product order (transposed or not) than the choice.
  if [[ $tuned == *-transposed-* ]]; then want=plain; else want=transposed; fi
  baseline=$(awk -v want="$want" '$1 ~ /^[0-9]+$/ && $2 ~ /^wgmma-m[0-9]+n[0-9]+k/ {
      if (($2 ~ /-transposed-/) == (want == "transposed")) { print $2; exit } }' "$W/tune/$tag.show")
  shape="$m,$n,$k,$dtype"
  H2H+="$shape,$tuned${baseline:+,$baseline};"
  [[ $previous != "$tuned" && $previous != "$baseline" ]] && H2H+="$shape,$tuned,$previous;"
done

# ---- C: head to head, alone ---------------------------------------------------------------------
H2H=$(tr ';' '\n' <<< "$H2H" | grep -v '^$' | tee "$W/h2h-input.txt" | tr '\n' ';')
SWR_GEMM_HEAD_TO_HEAD="$H2H" step "head to head" 90 "$W/h2h.log" \
  "$BIN/gemm_performance_gpu_test" --gtest_filter='*ChosenVariants*'

# ---- D: ncu, L2 requests per tile and k block, ours and cuBLAS's kernel -------------------------
METRICS=gpu__time_duration.sum,lts__t_requests.sum,lts__t_sectors.sum
METRICS+=,lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex.sum
tuned_7000=$(awk '$1 == "variant" {print $2; exit}' "$W/tune/7000x3000x5000_bf16.query" 2> /dev/null)
previous_7000=wgmma-m128n256k64s3-cooperative-c2x2-static-swz0
[[ $tuned_7000 == "$previous_7000" ]] && tuned_7000=""
for entry in ${tuned_7000:+"7000,3000,5000,bf16,$tuned_7000"} "7000,3000,5000,bf16,$previous_7000"; do
  [[ -n $NCU ]] || break
  name=$(tr ',' '_' <<< "$entry")
  # The harness checks the variant, then launches cuBLAS and it in turn: the first launches of
  # both kernels are profiled (caches flushed before each).
  SWR_GEMM_HEAD_TO_HEAD="$entry" step "ncu $name" 40 "$W/ncu/$name.csv" "$NCU" --csv \
    --page raw --cache-control all --clock-control none -k regex:'swr_gemm_sm90|nvjet|sm90_xmma|cutlass' \
    --launch-count 4 --metrics "$METRICS" "$BIN/gemm_performance_gpu_test" \
    --gtest_filter='*ChosenVariants*'
done

# ---- the summary, its table last ----------------------------------------------------------------
python3 "$D/summary.py" "$W" > "$OUT/summary.txt" 2>&1
echo "summary rc=$?" >> "$STEPS"
cp "$STEPS" "$OUT/steps.txt"
tar -C "$OUT" -czf "$OUT/logs.tar.gz" work && rm -rf "$W"
cat "$OUT/summary.txt"
