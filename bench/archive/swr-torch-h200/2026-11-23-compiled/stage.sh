#!/bin/bash
# Stages this folder from the torch-15 worktree's build (CPU machine): bash stage.sh
# The compiled hot path is built as `pip install ./python` builds it (a wheel, CPython's stable
# ABI: built with this machine's Python 3.11, loaded by the GPU machine's 3.12).
set -euo pipefail
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
W=/work/wt/torch-15
rm -rf "$D/lib" "$D/bin" "$D/python" "$D/bench" "$D/tests" "$D/before" "$D/experiment"
mkdir -p "$D/lib" "$D/bin" "$D/python" "$D/bench" "$D/tests/python" "$D/before/python/swr" "$D/before/bench"
cp "$W/build/lib/libswr_runtime.so" "$D/lib/" && strip "$D/lib/libswr_runtime.so"
for program in swr-tune tests/gpu/runtime_gpu_test bench/swr_launch_overhead; do
  cp "$W/build/$program" "$D/bin/" && strip "$D/bin/$(basename "$program")"
done
git -C "$W" ls-files python/swr | grep -v '\.c$' | while read -r f; do mkdir -p "$D/$(dirname "$f")"; cp "$W/$f" "$D/$f"; done
wheel=$(mktemp -d)
git -C "$W" archive HEAD python | tar -x -C "$wheel"
(cd "$wheel" && python3 -m pip wheel --quiet --no-deps --no-cache-dir -w dist ./python)
unzip -q -j "$wheel"/dist/swr-*-cp310-abi3-*.whl 'swr/_hotpath_ext.abi3.so' -d "$D/python/swr/"
rm -rf "$wheel"
cp "$W/bench/swr_torch_overhead.py" "$W/bench/swr_runtime.py" "$D/bench/"
cp "$W"/tests/python/test_swr_{torch,inputs,hot_path}.py "$D/tests/python/"
# before: main's package and benchmark (the same libswr_runtime.so).
for f in $(git -C "$W" ls-tree --name-only main python/swr/); do git -C "$W" show "main:$f" > "$D/before/$f"; done
for f in swr_torch_overhead.py swr_runtime.py; do git -C "$W" show "main:bench/$f" > "$D/before/bench/$f"; done
{ git -C "$W" rev-parse HEAD; git -C "$W" rev-parse main; } > "$D/COMMIT"
du -sh "$D"
