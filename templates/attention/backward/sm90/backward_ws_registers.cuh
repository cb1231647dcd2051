// How the warp-specialized wgmma attention backward kernels (backward_kernel_ws.cuh, and
// backward_kernel_ws_wide.cuh at head dim 256) split a thread's registers between the producer
// warpgroup and the two consumer warpgroups (setmaxnreg), out of the 168 a thread of 384 starts
// with. That is the CTA's whole pool: setmaxnreg.inc waits until the pool holds what it asks, so a
// split that asks more hangs (the static_assert below). Consumers / producer:
//   head dim 128       232 / 40: 24 left the producer's walk spilling; the consumers fit 232.
//   head dims 64, 256  240 / 24: at 64 (128 Q rows a step) 232 spilled and 240 measured 4% faster
//                      on the H200; the wide kernel's consumers spilled at 232 and serialized
//                      their wgmma, and its producer fits 24.
//   80 Q rows a step   240 / 24 (head dim 128): S^T and dP^T of 80 columns spilled at 232 and
//                      ptxas serialized the wgmma (C7512).
// One definition for the kernels' traits and the resource model (generator/attention_backward/
// resources.cpp checks a tile's accumulators against the consumers' share).
#pragma once

#include "common/host_device.cuh"

namespace swr {
namespace attention {

SWR_HOST_DEVICE constexpr int backward_ws_consumer_registers(int head_dim, int block_m) {
  return head_dim == 128 && block_m != 80 ? 232 : 240;
}
SWR_HOST_DEVICE constexpr int backward_ws_producer_registers(int head_dim, int block_m) {
  return head_dim == 128 && block_m != 80 ? 40 : 24;
}
// The warp roles of both warp-specialized kernels: a producer warpgroup and two consumer
// warpgroups, Stages-deep Q and dO rings, and the register split above.
constexpr int kBackwardWsConsumerWgs = 2;
template <int HeadDim, int BlockM, int Stages>
struct BackwardWsRoles {
  static constexpr int kConsumerWgs = kBackwardWsConsumerWgs;
  static constexpr int kThreads = 128 * (kConsumerWgs + 1);
  static constexpr int kConsumerThreads = 128 * kConsumerWgs;
  static constexpr int kStages = Stages;
  static constexpr int kConsumerRegisters = backward_ws_consumer_registers(HeadDim, BlockM);
  static constexpr int kProducerRegisters = backward_ws_producer_registers(HeadDim, BlockM);
  // dS^T stored by stmatrix (backward_fragments.cuh).
  static constexpr bool kDsByStmatrix = true;
};

// The split never asks more of the pool than 384 threads of 168 registers hold.
SWR_HOST_DEVICE constexpr bool backward_ws_registers_fit_pool(int head_dim, int block_m) {
  return 2 * 128 * backward_ws_consumer_registers(head_dim, block_m) +
             128 * backward_ws_producer_registers(head_dim, block_m) <=
         168 * 384;
}
static_assert(backward_ws_registers_fit_pool(64, 128) && backward_ws_registers_fit_pool(128, 64) &&
                  backward_ws_registers_fit_pool(128, 80) &&
                  backward_ws_registers_fit_pool(256, 64),
              "setmaxnreg asks no more than the CTA's register pool");

}  // namespace attention
}  // namespace swr
