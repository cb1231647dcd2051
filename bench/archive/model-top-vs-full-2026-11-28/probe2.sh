#!/usr/bin/env bash
# On H200s issue 27's tune call; on anything else the model-top-against-full-tune experiment.
here=$(dirname "$0")
nvidia-smi -L
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash "$here/probe.sh"
else
  export CUDA_VISIBLE_DEVICES=0
  bash "$here/fulltune.sh" tune
fi
