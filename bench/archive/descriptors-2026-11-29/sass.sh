#!/bin/bash
# sass.sh CACHEFILE OUT.sass : strip the cache header, disassemble the main kernel
f=$1; off=$(grep -obUaP '\x7fELF' "$f" | head -1 | cut -d: -f1)
tail -c +$((off+1)) "$f" > /tmp/sass/tmp.cubin
/tmp/tools/triton/backends/nvidia/bin/cuobjdump -sass -fun swr_attention_backward_v1 /tmp/sass/tmp.cubin > $2
