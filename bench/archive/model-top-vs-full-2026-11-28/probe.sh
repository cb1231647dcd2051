#!/usr/bin/env bash
# Runs issue 27's tune call only on H200s: split over several, or the points in $HALF on one.
nvidia-smi -L
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then echo NOT-H200; exit 0; fi
gpus=$(nvidia-smi -L | wc -l)
if ((gpus >= 2)); then
  OUT=$OUT bash .device/peers/run.sh split tune
else
  SWR_PEER_POINTS="${HALF:?}" OUT=$OUT bash .device/peers/run.sh tune
fi
