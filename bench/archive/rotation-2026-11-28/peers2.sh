#!/usr/bin/env bash
bash .device/unpack.sh
ORDERS=balanced OUT=$OUT/${ROUND:-round1} bash .device/peers/run.sh split peers 2>&1 | grep -v -i "userwarning\|exe_args" | tail -40
[[ -n ${ENERGY:-} ]] && OUT=$OUT bash .device/energy.sh
