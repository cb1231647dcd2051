#!/usr/bin/env bash
# Builds of swr-tune timed against each other on the same backward variants, on a GPU machine:
# rounds of A, B, ... in turn, each tuning one fixed variant per shape (timing only, a fresh
# database and cubin cache per side), one line per measurement on stdout:
#   SIDE ROUND SHAPE CONFIG MEDIAN_MS TFLOPS STATUS
#
#   bench/backward_build_ab.sh BIN_A BIN_B [BIN_C ...] [ROUNDS=3]
#
# BIN_*: swr-tune binaries built here from the commits compared (the templates are embedded, so
# each side runs its own kernels), carried to the GPU machine; sides are named A, B, C, ... in
# that order. The shapes are issue 27's D=128 and D=64 points, each with the warp-specialized
# variant the tuner found fastest there; SHAPES=FILE takes them from FILE instead, one
# "swr-tune shape options|config key" a line (a shape may come with several configs); FAMILY=attention
# times forward variants instead (the family the keys belong to). Last, lines
# starting with '#': each shape and config's median per side and its ratio to A's (below 1:
# faster than A).
set -uo pipefail
ROUNDS=3
if [[ $# -gt 0 && ${!#} =~ ^[0-9]+$ ]]; then
  ROUNDS=${!#}
  set -- "${@:1:$#-1}"
fi
if [[ $# -lt 2 ]]; then
  echo "usage: $0 BIN_A BIN_B [BIN_C ...] [ROUNDS]" >&2
  exit 2
fi
bins=("$@")
names=(A B C D E F G H)
if [[ -n ${SHAPES:-} ]]; then
  if [[ ! -r $SHAPES ]]; then
    echo "$0: SHAPES=$SHAPES: not a readable file of 'options|config' lines" >&2
    exit 2
  fi
  mapfile -t shapes < <(grep -v '^[[:space:]]*\(#\|$\)' "$SHAPES")
else
shapes=(
  "--batch 2 --heads 16 --seq 16384 --head-dim 128|bwd-wgmma-m64n128w12s2-sawtooth-static-head_major"
  "--batch 2 --heads 16 --seq 16384 --head-dim 128 --causal|bwd-wgmma-m64n128w12s2-cyclic-dynamic-head_major"
  "--batch 2 --heads 32 --seq 16384 --head-dim 64|bwd-wgmma-m128n128w12s2-sawtooth-dynamic-head_major"
  "--batch 4 --heads 32 --seq 4096 --head-dim 64 --causal|bwd-wgmma-m128n128w12s2-cyclic-dynamic-head_major"
  "--batch 1 --heads 32 --seq 32768 --head-dim 64|bwd-wgmma-m128n128w12s2-cyclic-static-head_major"
  "--batch 1 --heads 32 --seq 32768 --head-dim 64 --causal|bwd-wgmma-m128n128w12s2-cyclic-grid-head_major")
fi
FAMILY=${FAMILY:-attention-backward}
W=$(mktemp -d /tmp/swr-ab.XXXXXX)
mkdir -p "$W/home"
export HOME=$W/home SWR_DB=
for round in $(seq 1 "$ROUNDS"); do
  for i in "${!bins[@]}"; do
    side=${names[$i]} bin=${bins[$i]}
    export SWR_CACHE_DIR=$W/cache-$side
    for entry in "${shapes[@]}"; do
      read -ra dims <<<"${entry%%|*}"
      config=${entry##*|}
      db=$W/$side-$round.db
      if ! "$bin" --family "$FAMILY" --gpu auto "${dims[@]}" --dtype bf16 --config "$config" \
        --counters none --db "$db" >"$W/tune.log" 2>&1; then
        echo "FAIL $side $round ${entry%%|*}: $(tail -1 "$W/tune.log")"
        continue
      fi
      "$bin" show --family "$FAMILY" --gpu auto "${dims[@]}" --dtype bf16 --db "$db" \
        --json >"$W/show.json"
      python3 - "$side" "$round" "${entry%%|*}" "$config" "$W/show.json" <<'PY'
import json, sys
side, round_, shape, config, path = sys.argv[1:6]
# The side's database of this round holds every config of the shape run so far: this one alone.
for result in json.load(open(path))["results"]:
    for m in result["variants"]:
        if m["config_key"] == config:
            print(side, round_, shape.replace(" ", ""), m["config_key"], m["median_ms"],
                  m["tflops"], m["status"])
PY
    done
  done
done | tee "$W/lines"
python3 - "$W/lines" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    fields = line.split()
    if len(fields) == 7 and fields[6] == "ok":
        runs[(fields[2] + " " + fields[3], fields[0])].append(float(fields[4]))
for shape in dict.fromkeys(shape for shape, _ in runs):  # a shape and its config
    medians = {side: statistics.median(runs[(shape, side)])
               for side in sorted(side for s, side in runs if s == shape)}
    base = medians.get("A")
    print("#", shape, " ".join(f"{side}={ms:.3f}" + (f"({ms / base:.3f})" if base else "")
                               for side, ms in medians.items()))
PY
rm -rf "$W"
