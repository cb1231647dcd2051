// How the warp-specialized wgmma attention backward (backward_kernel_ws.cuh) splits a thread's
// registers between its producer warpgroup and its two consumer warpgroups (setmaxnreg), out of
// the 168 a thread of 384 starts with: 2 x 128 x 240 + 128 x 24, or 232 and 40 at head dim 128,
// where 24 left the producer's walk spilling and the consumers compile without spills at 232 (at
// head dim 64 and 128 Q rows a step, 232 spilled; 240 measured 4% faster there on the H200). One
// definition for the kernel's traits and the resource model (generator/attention_backward/
// resources.cpp checks a tile's accumulators against the consumers' share).
#pragma once

#include "common/host_device.cuh"

namespace swr {
namespace attention {

SWR_HOST_DEVICE constexpr int backward_ws_consumer_registers(int head_dim) {
  return head_dim >= 128 ? 232 : 240;
}
SWR_HOST_DEVICE constexpr int backward_ws_producer_registers(int head_dim) {
  return head_dim >= 128 ? 40 : 24;
}

}  // namespace attention
}  // namespace swr
