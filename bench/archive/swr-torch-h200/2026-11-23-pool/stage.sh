#!/bin/bash
# Stages this folder from the torch-15 worktree's build (CPU machine): bash stage.sh
set -euo pipefail
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=/work/wt/torch-15
rm -rf "$D/lib" "$D/bin" "$D/python" "$D/bench" "$D/tests" "$D/before"
mkdir -p "$D/lib" "$D/bin" "$D/python" "$D/bench" "$D/tests/python" "$D/before/python/swr" "$D/before/bench"
cp "$W/build/lib/libswr_runtime.so" "$D/lib/" && strip "$D/lib/libswr_runtime.so"
for program in swr-tune tests/gpu/runtime_gpu_test bench/swr_launch_overhead; do
  cp "$W/build/$program" "$D/bin/" && strip "$D/bin/$(basename "$program")"
done
git -C "$W" ls-files python/swr | while read -r f; do mkdir -p "$D/$(dirname "$f")"; cp "$W/$f" "$D/$f"; done
cp "$W/bench/swr_torch_overhead.py" "$W/bench/swr_runtime.py" "$D/bench/"
cp "$W/tests/python/test_swr_torch.py" "$W/tests/python/test_swr_inputs.py" "$D/tests/python/"
# before: main's package and benchmark (the same libswr_runtime.so: main's Python passes its own
# zeroed counters, which the runtime takes as they are).
for f in $(git -C "$W" ls-tree --name-only main python/swr/); do git -C "$W" show "main:$f" > "$D/before/$f"; done
for f in swr_torch_overhead.py swr_runtime.py; do git -C "$W" show "main:bench/$f" > "$D/before/bench/$f"; done
(cd "$W" && git rev-parse HEAD) > "$D/COMMIT"
du -sh "$D"
