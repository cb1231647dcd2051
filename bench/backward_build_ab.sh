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
# variant the tuner found fastest there.
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
W=$(mktemp -d /tmp/swr-ab.XXXXXX)
mkdir -p "$W/home"
export HOME=$W/home SWR_DB=
shapes=(
  "--batch 2 --heads 16 --seq 16384 --head-dim 128|bwd-wgmma-m64n128w12s2-sawtooth-static-head_major"
  "--batch 2 --heads 16 --seq 16384 --head-dim 128 --causal|bwd-wgmma-m64n128w12s2-cyclic-dynamic-head_major"
  "--batch 2 --heads 32 --seq 16384 --head-dim 64|bwd-wgmma-m128n128w12s2-sawtooth-dynamic-head_major"
  "--batch 4 --heads 32 --seq 4096 --head-dim 64 --causal|bwd-wgmma-m128n128w12s2-cyclic-dynamic-head_major"
  "--batch 1 --heads 32 --seq 32768 --head-dim 64|bwd-wgmma-m128n128w12s2-cyclic-static-head_major"
  "--batch 1 --heads 32 --seq 32768 --head-dim 64 --causal|bwd-wgmma-m128n128w12s2-cyclic-grid-head_major")
for round in $(seq 1 "$ROUNDS"); do
  for i in "${!bins[@]}"; do
    side=${names[$i]} bin=${bins[$i]}
    export SWR_CACHE_DIR=$W/cache-$side
    for entry in "${shapes[@]}"; do
      read -ra dims <<<"${entry%%|*}"
      config=${entry##*|}
      db=$W/$side-$round.db
      if ! "$bin" --family attention-backward --gpu auto "${dims[@]}" --dtype bf16 --config "$config" \
        --counters none --db "$db" >"$W/tune.log" 2>&1; then
        echo "FAIL $side $round ${entry%%|*}: $(tail -1 "$W/tune.log")"
        continue
      fi
      "$bin" show --family attention-backward --gpu auto "${dims[@]}" --dtype bf16 --db "$db" \
        --json >"$W/show.json"
      python3 - "$side" "$round" "${entry%%|*}" "$W/show.json" <<'PY'
import json, sys
side, round_, shape, path = sys.argv[1:5]
for result in json.load(open(path))["results"]:
    for m in result["variants"]:
        print(side, round_, shape.replace(" ", ""), m["config_key"], m["median_ms"], m["tflops"],
              m["status"])
PY
    done
  done
done
rm -rf "$W"
