# Call 2 (carry .device/fa4b and this folder, at once on the same machine): kstep.py over POINTS.
set -u
source "$(dirname "$0")/env.sh"
unpack_fa4
python3 "$here/kstep.py" "$PWD/$P/bench" "$W/catalog.db" "${ROUNDS:-8}" \
  ${POINTS:-2x16x16384x128-noncausal 1x16x32768x128-causal 1x16x32768x128-noncausal} 2>&1 |
  grep -v "Warning\|exe_args\|_warn_once" | tee "$OUT/kstep.txt"
cp /tmp/kstep.json "$OUT/" 2>/dev/null
