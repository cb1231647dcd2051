#!/usr/bin/env bash
# Issue 13's last gap, ragged GEMM shapes >= 0.9x cuBLAS: the 2x2 cluster (A multicast along a
# cluster row, B down a cluster column) on the H200, in one device call.
#
#   bench/gemm_ragged_device_run.sh stage [BUILD_DIR] [DEST]   # build machine: stripped swr-tune,
#       gemm_kernel_gpu_test and gemm_performance_gpu_test in DEST/bin.tar.xz, the tune key lists
#       (DEST/keys_MxNxK.txt, from swr-tune space) and this script as DEST/run.sh
#       (DEST: /work/main/.device/ragged-13)
#   cd DEST && OUT=... bash run.sh                              # GPU machine (nvidia-h200), ~7 min
#
# run.sh, each step with its own timeout, none past $BUDGET seconds (500), every exit code logged:
#   A (GPU shared, ~1 min): gemm_kernel_gpu_test's wgmma cases on odd sizes (2x2 new: 5 static,
#     2 stream-K); compute-sanitizer racecheck and synccheck on coop 128x256 c2x2 static (f16),
#     pingpong 64x256 c2x2 static (f16) and coop 128x128 c2x2 stream-K (f16).
#   B (alone, ~4 min): per shape swr-tune over the keys of keys_MxNxK.txt (2x2 and 2x1 static
#     of the cooperative tiles at every stride, 2x2 stream-K, then every binary at stride 0;
#     cuBLAS in the same run), then query and show. A cluster family whose correctness case
#     failed in A is left out.
#   C (alone, ~1 min): gemm_performance_gpu_test, flushed L2, launches in turn: per shape the tuned
#     best vs cuBLAS and vs the previous best (issue 13's call 1), the 2x2 twin of the previous best
#     (same tile and stride) vs the previous best: the knob isolated, and its stream-K twin vs it.
#   D (alone, ~1 min): ncu L2 requests and sectors of the 128x256 1x1/2x1/1x2/2x2 twins at
#     5000x3000x7000 f16 and 1x1/2x2 at the aligned 5120x3072x7168, against the request model.
#   Last: the summary table (also $OUT/summary.txt); logs, the database and ncu CSVs in
#   $OUT/logs.tar.gz.
set -uo pipefail

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
  # The tune's key list per shape, most telling first (the time budget may cut the tail): the
  # cooperative tiles' 2x2 and 2x1 static variants at every stride, 2x2 stream-K, 256x128 1x2,
  # then every other binary at stride 0.
  for shape in "5000 3000 7000" "3000 7000 5000" "6000 5000 4000" "5120 3072 7168"; do
    read -r m n k <<< "$shape"
    space=$("$build/swr-tune" space --family gemm --gpu h200 --m "$m" --n "$n" --k "$k" |
      awk '$1 ~ /^wgmma-/ {print $1}')
    {
      for tile in m128n256k64s3 m256n128k64s3 m128n192k64s4 m128n128k64s4; do
        for schedule in c2x2-static c2x1-static; do
          grep "^wgmma-$tile-cooperative-$schedule-" <<< "$space"
        done
      done
      grep -- "-cooperative-c2x2-streamk-" <<< "$space"
      grep -- "^wgmma-m256n128k64s3-cooperative-c1x2-static-" <<< "$space"
      grep -- "-swz0$" <<< "$space"
    } | awk '!seen[$0]++' > "$dest/keys_${m}x${n}x${k}.txt"
    echo "keys_${m}x${n}x${k}.txt: $(wc -l < "$dest/keys_${m}x${n}x${k}.txt") keys"
  done
  cp "$0" "$dest/run.sh"
  du -sh "$dest"
  exit 0
fi

D=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/ragged-13-out}
BUDGET=${BUDGET:-500}
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

step() {  # step NAME SECONDS LOG COMMAND...: at most SECONDS, never past $BUDGET
  local name=$1 limit=$2 log=$3 start=$SECONDS
  shift 3
  local left=$((BUDGET - SECONDS))
  if ((left < 10)); then echo "$name skipped (budget)" >> "$STEPS"; return 1; fi
  ((limit > left)) && limit=$left
  timeout "$limit" "$@" > "$log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - start))s (at ${SECONDS}s)" >> "$STEPS"
  return $rc
}

# ---- A: correctness and sanitizers, in parallel (the GPU is shared; nothing is timed) ----------
cases=$("$BIN/gemm_kernel_gpu_test" --gtest_list_tests |
  sed -n 's/^ *MatchesReferenceOnOddSizes\/\(wgmma_[^ ]*\).*/\1/p')
for c in $cases; do
  step "test $c" 120 "$W/tests/$c.log" "$BIN/gemm_kernel_gpu_test" \
    --gtest_filter="*MatchesReferenceOnOddSizes/$c" &
done
for c in wgmma_m128n256k64s3_cooperative_c2x2_static_swz0_f16 \
  wgmma_m64n256k64s4_pingpong_c2x2_static_swz0_f16 \
  wgmma_m128n128k64s4_cooperative_c2x2_streamk_swz0_f16; do
  for tool in racecheck synccheck; do
    step "$tool $c" 120 "$W/san/$tool-$c.log" "$SANITIZER" --tool "$tool" --print-limit 20 \
      "$BIN/gemm_kernel_gpu_test" --gtest_filter="*MatchesReferenceOnOddSizes/$c" &
  done
done
wait
echo "phase A done at ${SECONDS}s" >> "$STEPS"
# A cluster family whose correctness case failed is not tuned.
drop='^$'
for family in c2x2-static c2x2-streamk; do
  for log in "$W"/tests/*"${family//-/_}"*.log; do
    grep -q "\[  PASSED  \] 1 test\." "$log" 2> /dev/null || { drop="$drop|$family"; break; }
  done
done
echo "left out of the tunes: $drop" >> "$STEPS"

# ---- B: tunes, alone on the GPU -----------------------------------------------------------------
# m n k dtype tune-seconds previous-best (issue 13's call 1 choice; the aligned control's best)
SHAPES=(
  "5000 3000 7000 f16 50 wgmma-m128n256k64s3-cooperative-c2x1-static-swzn2048"
  "5000 3000 7000 bf16 40 wgmma-m128n256k64s3-cooperative-c2x1-static-swzn2048"
  "3000 7000 5000 bf16 40 wgmma-m128n256k64s3-cooperative-c2x1-static-swzn512"
  "6000 5000 4000 f16 40 wgmma-m128n192k64s4-cooperative-c2x1-static-swzm2048"
  "5120 3072 7168 f16 25 wgmma-m128n256k64s3-cooperative-c1x1-static-swzn1536"
)
H2H=""
for entry in "${SHAPES[@]}"; do
  read -r m n k dtype seconds previous <<< "$entry"
  tag=${m}x${n}x${k}_$dtype
  mapfile -t keys < <(grep -Ev "$drop" "$D/keys_${m}x${n}x${k}.txt")
  args=()
  for key in "${keys[@]}"; do args+=(--config "$key"); done
  step "tune $tag (${#keys[@]} keys)" $((seconds + 45)) "$W/tune/$tag.log" "$BIN/swr-tune" tune \
    --family gemm --m "$m" --n "$n" --k "$k" --dtype "$dtype" --gpu h200 --db "$DB" \
    --time-budget "$seconds" "${args[@]}"
  "$BIN/swr-tune" query --family gemm --m "$m" --n "$n" --k "$k" --dtype "$dtype" --gpu h200 \
    --db "$DB" > "$W/tune/$tag.query" 2>&1
  "$BIN/swr-tune" show --family gemm --m "$m" --n "$n" --k "$k" --dtype "$dtype" --gpu h200 \
    --db "$DB" > "$W/tune/$tag.show" 2>&1
  tuned=$(awk '$1 == "variant" {print $2; exit}' "$W/tune/$tag.query")
  twin=$(sed -E 's/-c[12]x[12]-/-c2x2-/' <<< "$previous")
  stream_k=${twin/-static-/-streamk-}
  shape="$m,$n,$k,$dtype"
  if [[ -n $tuned && $tuned != "$previous" ]]; then
    H2H+="$shape,$tuned,$previous;"
  elif [[ -n $tuned ]]; then
    H2H+="$shape,$tuned;"
  fi
  [[ $tuned != "$twin" ]] && H2H+="$shape,$twin,$previous;"
  [[ $tuned != "$stream_k" ]] && H2H+="$shape,$stream_k,$twin;"
done

# ---- C: head to head, alone ---------------------------------------------------------------------
H2H=$(tr ';' '\n' <<< "$H2H" | grep -Ev "$drop" | tee "$W/h2h-input.txt" | tr '\n' ';')
SWR_GEMM_HEAD_TO_HEAD="$H2H" step "head to head" 170 "$W/h2h.log" \
  "$BIN/gemm_performance_gpu_test" --gtest_filter='*ChosenVariants*'

# ---- D: ncu, L2 requests per tile and k block ---------------------------------------------------
METRICS=gpu__time_duration.sum,lts__t_requests.sum,lts__t_sectors.sum
METRICS+=,lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex.sum
K=wgmma-m128n256k64s3-cooperative
for entry in "5000,3000,7000,f16,$K-c1x1-static-swzn2048" "5000,3000,7000,f16,$K-c2x1-static-swzn2048" \
  "5000,3000,7000,f16,$K-c1x2-static-swzn2048" "5000,3000,7000,f16,$K-c2x2-static-swzn2048" \
  "5120,3072,7168,f16,$K-c1x1-static-swzn1536" "5120,3072,7168,f16,$K-c2x2-static-swzn1536"; do
  [[ -n $NCU ]] || break
  grep -Eq "$drop" <<< "$entry" && continue
  name=$(tr ',' '_' <<< "$entry")
  SWR_GEMM_HEAD_TO_HEAD="$entry" step "ncu $name" 60 "$W/ncu/$name.csv" "$NCU" --csv \
    --page raw --cache-control all --clock-control none -k regex:swr_gemm_ws --launch-count 1 \
    --metrics "$METRICS" "$BIN/gemm_performance_gpu_test" --gtest_filter='*ChosenVariants*'
done

# ---- the table ----------------------------------------------------------------------------------
python3 - "$W" > "$OUT/summary.txt" 2>&1 << 'PYTHON'
import csv, glob, io, os, re, sys

w = sys.argv[1]
print(open(os.path.join(w, "gpu.txt")).read().strip())
print("\n== steps (rc, seconds)")
print(open(os.path.join(w, "steps.txt")).read().strip())

print("\n== correctness (gemm_kernel_gpu_test, odd sizes, 5 rasters x 2 grids) and sanitizers")
for path in sorted(glob.glob(os.path.join(w, "tests", "*.log"))):
    text = open(path).read()
    verdict = "PASS" if "[  PASSED  ] 1 test" in text else "FAIL"
    runs = re.search(r"(\d+) runs checked", text)
    print(f"{verdict} {os.path.basename(path)[:-4]} {runs.group(0) if runs else ''}")
for path in sorted(glob.glob(os.path.join(w, "san", "*.log"))):
    text = open(path).read()
    summary = re.findall(r"(RACECHECK SUMMARY: .*|ERROR SUMMARY: .*)", text)
    print(f"{os.path.basename(path)[:-4]}: {'; '.join(summary) or 'no summary'}"
          f" {'PASSED' if '[  PASSED  ]' in text else 'NOT PASSED'}")

print("\n== tunes: the chosen variant (swr-tune query) and its tuner ratio")
for path in sorted(glob.glob(os.path.join(w, "tune", "*.log"))):
    text = open(path).read()
    measured = re.search(r"measured (\d+) of (\d+) variants", text)
    query = open(path[:-4] + ".query").read() if os.path.exists(path[:-4] + ".query") else ""
    chosen = re.search(r"variant\s+(\S+)", query)
    ratio = None
    if chosen:
        line = re.search(r"\d+\s+" + re.escape(chosen.group(1)) + r"\s+\S+\s+\S+\s+(\S+)", text)
        ratio = line.group(1) if line else None
    print(f"{os.path.basename(path)[:-4]}: {measured.group(0) if measured else 'no summary'}; "
          f"chosen {chosen.group(1) if chosen else '-'} ({ratio}x cuBLAS in the tune)")

print("\n== head to head (medians of 40, each launch from a flushed L2, in turn with cuBLAS)")
h2h = os.path.join(w, "h2h.log")
text = open(h2h).read() if os.path.exists(h2h) else ""
for line in text.splitlines():
    m = re.match(r"(\S+) head to head, .*cuBLAS ([\d.]+) TFLOP/s, (\S+) ([\d.]+) TFLOP/s .*= ([\d.]+)x", line)
    if m:
        print(f"{m.group(1):24s} {m.group(3):58s} {m.group(5)}x cuBLAS ({m.group(4)} vs {m.group(2)} TFLOP/s)")
    m = re.match(r"(\S+) (\S+) over (\S+), in turn with cuBLAS: ([\d.]+)x speedup", line)
    if m:
        print(f"{m.group(1):24s}   speedup of {m.group(2)} over {m.group(3)}: {m.group(4)}x")
    if "grid" in line and "co-resident" in line:
        print("  " + line)
    if "Failure" in line or "relative error" in line:
        print("  " + line)

print("\n== ncu: L2 requests and sectors per CTA tile and k block (model: 128-byte lines touched)")
def lines_per_row(pitch_bytes):  # TMA box rows of 128 bytes: 1 line if aligned, else 2
    offsets = [(r * pitch_bytes) % 128 for r in range(128)]
    return 1 + sum(o != 0 for o in offsets) / len(offsets)
for path in sorted(glob.glob(os.path.join(w, "ncu", "*.csv"))):
    name = os.path.basename(path)[:-4]
    m_, n_, k_, dtype, key = name.split("_", 4)
    m_, n_, k_ = int(m_), int(n_), int(k_)
    bm, bn = map(int, re.search(r"m(\d+)n(\d+)k", key).groups())
    cm, cn = map(int, re.search(r"-c(\d)x(\d)-", key).groups())
    tiles = -(-(-(-m_ // bm)) // cm) * cm * (-(-(-(-n_ // bn)) // cn) * cn)
    kb = -(-k_ // 64)
    model = bm / cn * lines_per_row(2 * k_) + 64 * bn / 64 / cm * lines_per_row(2 * n_)
    raw = open(path).read()
    lines = [line for line in raw.splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header = next((row for row in rows if "Kernel Name" in row), None)
    if header is None:
        tail = raw.strip().splitlines()[-1] if raw.strip() else "empty"
        print(f"{name}: no ncu rows ({tail})")
        continue
    below = rows[rows.index(header) + 1:]
    units = below[0] if below else []
    values = below[-1] if len(below) > 1 else []
    def get(metric):
        try:
            return float(values[header.index(metric)].replace(",", ""))
        except (ValueError, IndexError):
            return None
    parts = [f"{name}: model {model:.0f} lines"]
    for metric in ("lts__t_requests.sum", "lts__t_requests_srcunit_tex.sum",
                   "lts__t_sectors.sum", "lts__t_sectors_srcunit_tex.sum"):
        v = get(metric)
        if v is not None:
            parts.append(f"{metric.split('__')[1].removesuffix('.sum')} {v / (tiles * kb):.0f}")
    duration = get("gpu__time_duration.sum")
    if duration is not None:
        unit = units[header.index("gpu__time_duration.sum")] if units else ""
        parts.append(f"kernel {duration:g} {unit} (L2 flushed, clocks free)")
    print("; ".join(parts))
PYTHON
echo "summary rc=$?" >> "$STEPS"
cp "$STEPS" "$OUT/steps.txt"
tar -C "$OUT" -czf "$OUT/logs.tar.gz" work && rm -rf "$W"
cat "$OUT/summary.txt"
