#!/usr/bin/env bash
mkdir -p /tmp/fa4 && cp .device/fa4a/part.* /tmp/fa4/ && ls /tmp/fa4 | wc -l && nvidia-smi -L
