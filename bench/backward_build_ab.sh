#!/usr/bin/env bash
# Two builds of swr-tune timed against each other on the same backward variants, on a GPU machine:
# rounds of A then B, each tuning one fixed variant per shape (timing only, a fresh database and
# cubin cache per side), one line per measurement on stdout:
#   SIDE ROUND SHAPE CONFIG MEDIAN_MS TFLOPS STATUS
#
#   bench/backward_build_ab.sh BIN_A BIN_B [ROUNDS=3]
#
# BIN_A/BIN_B: swr-tune binaries built here from the two commits (the templates are embedded, so
# each side runs its own kernels), carried to the GPU machine. The shapes are issue 27's D=128 and
# D=64 points, each with the warp-specialized variant the knob runs found fastest there.
set -uo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 BIN_A BIN_B [ROUNDS]" >&2
  exit 2
fi
A=$1 B=$2 ROUNDS=${3:-3}
W=$(mktemp -d /tmp/swr-ab.XXXXXX)
mkdir -p "$W/home"
export HOME=$W/home SWR_DB=
shapes=(
  "--batch 2 --heads 16 --seq 16384 --head-dim 128|bwd-wgmma-m64n128w12s2-sawtooth-static-head_major"
  "--batch 2 --heads 16 --seq 16384 --head-dim 128 --causal|bwd-wgmma-m64n128w12s2-cyclic-dynamic-head_major"
  "--batch 2 --heads 32 --seq 16384 --head-dim 64|bwd-wgmma-m128n128w12s2-sawtooth-dynamic-head_major"
  "--batch 4 --heads 32 --seq 4096 --head-dim 64 --causal|bwd-wgmma-m128n128w12s2-cyclic-dynamic-head_major")
for round in $(seq 1 "$ROUNDS"); do
  for side in A B; do
    bin=$A
    [[ $side == B ]] && bin=$B
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
