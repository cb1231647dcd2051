# Call 1 of step-kernels-h100.txt (carry .device/peers, .device/fa4a and this folder): FA4's first
# pack kept for call 2, and POINTS tuned.
set -u
source "$(dirname "$0")/env.sh"
keep_fa4_first_pack
for point in ${POINTS:-2x16x16384x128-noncausal 1x16x32768x128-causal 1x16x32768x128-noncausal}; do
  tune_point "$point"
done
