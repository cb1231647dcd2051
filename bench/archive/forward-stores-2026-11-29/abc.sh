#!/usr/bin/env bash
# Forward experiments: A = main's kernels against the builds named in BINS (default D: unmasked tiles
# walk a copy of the steps without the masking code; E: D plus O stored 16 bytes a lane).
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/env.txt"
for X in ${SIDES:-D E}; do
  SHAPES=shapes-odd.txt FAMILY=attention timeout 150 bash backward_build_ab.sh ./swr-tune-$X ./swr-tune-$X 1 > "$OUT/check-$X.txt" 2>&1
  grep -c " ok" "$OUT/check-$X.txt"; grep -v "^#" "$OUT/check-$X.txt" | grep -v " ok$" | head -5
done
SHAPES=shapes-fwd.txt FAMILY=attention timeout ${T:-420} bash backward_build_ab.sh ./swr-tune-A ${BINS:-./swr-tune-D ./swr-tune-E} ${R:-3} > "$OUT/abc-forward.txt" 2>&1
grep -h "^#\|FAIL" "$OUT"/abc-forward.txt
