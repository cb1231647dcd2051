#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang 14 under AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz/, and runs each for SECONDS (default 60) from its seed
# corpus (tests/fuzz/corpus/TARGET, which also holds every crash found so far as a regression
# input). Fails on the first crash, leak, timeout or escaped exception; the input that did it is
# left in build-fuzz/artifacts/ and named in the output.
#   scripts/fuzz.sh [SECONDS [TARGET...]]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(fuzz_manifest fuzz_config_keys fuzz_json_forms fuzz_import_source fuzz_plan_file
    fuzz_problem_options)
fi
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "error: bad SECONDS '$seconds': allowed a positive number" >&2; exit 2; }

build=${SWR_FUZZ_BUILD_DIR:-build-fuzz}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [[ ! -f $build/CMakeCache.txt ]]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSWR_FUZZ=ON -DSWR_BUILD_TESTS=OFF \
    -DSWR_BUILD_BENCHMARKS=OFF -DSWR_BUILD_EXAMPLES=OFF -DSWR_INSTALL=OFF >/dev/null
fi
cmake --build "$build" --target "${targets[@]}" -j "$(nproc)"

mkdir -p "$build/artifacts"
for target in "${targets[@]}"; do
  # New inputs go to a working corpus in the build tree; the seeds in the repository are read only.
  work=$build/corpus/$target
  mkdir -p "$work"
  echo "== $target: ${seconds}s"
  if ! "$build/tests/fuzz/$target" "$work" "tests/fuzz/corpus/$target" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" 2>"$build/$target.log"; then
    tail -n 60 "$build/$target.log" >&2
    echo "error: $target failed; the input is in $build/artifacts/ (add it to" \
      "tests/fuzz/corpus/$target once fixed)" >&2
    exit 1
  fi
  grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::new_units_added)' \
    "$build/$target.log" || true
done
echo "fuzzing passed: ${targets[*]} (${seconds}s each)"
