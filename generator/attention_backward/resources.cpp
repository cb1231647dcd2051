// The attention backward's resource rules (templates/attention/backward/: the mma.sync kernel, and
// sm90/ the wgmma kernel).
#include <string>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "swr/instruction_path.hpp"
#include "templates/attention/backward/sm90/backward_ws_registers.cuh"

namespace swr {
namespace {

// Head dims above this split 16 K/V rows over two warps (BackwardTraits::kDSplit).
constexpr int kSplitAboveHeadDim = 128;
// Addresses, loop counters, the walk's coordinates and the ldmatrix fragments of a k16 step.
// Calibrated on the compiled matrix (sm_90a and sm_121): an estimate of 224..244 compiled without
// spills, 256 spilled (d128 m64n128w8, d256 m64n64w8, d64 m128n128w8).
constexpr int kBookkeepingRegisters = 64;
// wgmma without a producer: block_m x head_dim at most this (S^T and dP^T beside dK and dV in 255
// registers). The warp-specialized kernels' consumers have backward_ws_consumer_registers.
constexpr int kWgmmaRegisterColumns = 8192;
// wgmma: registers beside the accumulators of a step (addresses, the walk, packed fragments).
constexpr int kWgmmaBookkeepingRegisters = 24;
// The warp-specialized kernels' mbarriers and tile queue (BackwardWsTraits::kBarrierBytes,
// BackwardWsWideTraits::kBarrierBytes).
constexpr int kWsBarrierBytes = 512;
constexpr int kWsWideBarrierBytes = 256;

int d_split(int head_dim) {
  return head_dim > kSplitAboveHeadDim ? 2 : 1;
}

// Bytes of one row of a SwizzledTile of `columns` 16-bit elements (templates/common/
// swizzled_tile.cuh): padded by one 16-byte chunk unless a multiple of 64.
int tile_row_bytes(int columns) {
  return columns % 64 == 0 ? columns * 2 : (columns / 8 + 1) * 16;
}

std::size_t aligned(std::size_t bytes) {
  return (bytes + kBackwardWorkspaceAlignment - 1) / kBackwardWorkspaceAlignment *
         kBackwardWorkspaceAlignment;
}

// The wgmma kernel's static_asserts in words (templates/attention/backward/sm90/
// backward_traits.cuh), and its register budget: dK and dV of head_dim columns beside S^T and
// dP^T of block_m columns, per 64 K/V rows of a warpgroup.
// The wide-head kernel (backward_ws_wide_traits.cuh): a 64 x 64 tile whose two consumer
// warpgroups hold one of dK and dV each, beside half of dQ and the packed step.
std::string wide_tile_problem(int head_dim, const AttentionBackwardConfig& config) {
  if (config.block_m != 64) {
    return "wgmma with block_n 64 (the wide-head kernel): block_m " +
           std::to_string(config.block_m) + " must be 64";
  }
  if (head_dim <= 128 || head_dim % 128 != 0) {
    return "wgmma with block_n 64 (the wide-head kernel): head dim " + std::to_string(head_dim) +
           " must be above 128 and a multiple of 128 (dQ's halves in 64-column chunks)";
  }
  // S^T or dP^T is packed before dQ's half is issued: the two never live together.
  const int registers = head_dim / 2 + head_dim / 4 + config.block_m / 4;
  if (registers + kWgmmaBookkeepingRegisters >
      attention::backward_ws_consumer_registers(head_dim, config.block_m)) {
    return "wgmma with block_n 64: head dim " + std::to_string(head_dim) + ": dK or dV, " +
           "half of dQ and the packed step need " +
           std::to_string(registers + kWgmmaBookkeepingRegisters) +
           " registers a consumer thread, setmaxnreg gives " +
           std::to_string(attention::backward_ws_consumer_registers(head_dim, config.block_m));
  }
  if (config.stages < 1 || config.stages > 2) {
    return "stages " + std::to_string(config.stages) + " must be 1 or 2 (the wide-head kernel)";
  }
  if (config.head_group < 1) {
    return "head_group " + std::to_string(config.head_group) + " must be at least 1";
  }
  return {};
}

std::string wgmma_tile_problem(int head_dim, const AttentionBackwardConfig& config) {
  if (config.splits_products()) return wide_tile_problem(head_dim, config);
  if ((config.warps != 8 && config.warps != 12) || config.block_n != 128) {
    return "wgmma: two warpgroups of 64 K/V rows each (block_n 128), alone (warps 8) or with a "
           "producer warpgroup (warps 12), or with a producer and block_n 64 for wide heads, not "
           "warps " +
           std::to_string(config.warps) + " and block_n " + std::to_string(config.block_n);
  }
  if (head_dim % 64 != 0) {
    return "wgmma: head dim " + std::to_string(head_dim) + " must be whole 64-column chunks";
  }
  // 80 Q rows a step (FlashAttention-3's non-causal tile at head dim 128): dQ is computed
  // transposed, each warpgroup one 64-column chunk (BackwardStepTraits::kDqTransposed), and only
  // the warp-specialized kernel has that product.
  if (config.block_m == 80) {
    if (!config.warp_specialized() || head_dim != 128) {
      return "wgmma: block_m 80 is the warp-specialized kernel's at head dim 128 (dQ transposed, "
             "one 64-column chunk a warpgroup), not head dim " +
             std::to_string(head_dim) + " with warps " + std::to_string(config.warps);
    }
  } else if (config.block_m != 64 && config.block_m != 128) {
    return "wgmma: block_m " + std::to_string(config.block_m) + " must be 64, 80 or 128";
  }
  if (config.warp_specialized() &&
      head_dim + config.block_m + kWgmmaBookkeepingRegisters >
          attention::backward_ws_consumer_registers(head_dim, config.block_m)) {
    return "wgmma: block_m " + std::to_string(config.block_m) + " and head dim " +
           std::to_string(head_dim) + ": S^T, dP^T, dK and dV need " +
           std::to_string(head_dim + config.block_m + kWgmmaBookkeepingRegisters) +
           " registers a consumer thread, setmaxnreg gives " +
           std::to_string(attention::backward_ws_consumer_registers(head_dim, config.block_m));
  }
  if (!config.warp_specialized() && config.block_m * head_dim > kWgmmaRegisterColumns) {
    return "wgmma: block_m " + std::to_string(config.block_m) + " x head dim " +
           std::to_string(head_dim) + " over " + std::to_string(kWgmmaRegisterColumns) +
           ": S^T, dP^T, dK and dV do not fit a warpgroup's registers";
  }
  // dQ over the warpgroups: 64 rows each (block_m 128), else whole 64-column chunks each.
  if (config.block_m == 64 && head_dim % 128 != 0) {
    return "wgmma: block_m 64 splits dQ's columns in 64-column chunks over two warpgroups: "
           "head dim " +
           std::to_string(head_dim) + " is not a multiple of 128";
  }
  if (config.stages < 1 || config.stages > 3) {
    return "stages " + std::to_string(config.stages) + " must be 1, 2 or 3";
  }
  if (config.head_group < 1) {
    return "head_group " + std::to_string(config.head_group) + " must be at least 1";
  }
  return {};
}

}  // namespace

int backward_q_tiles(const AttentionBackwardProblem& problem,
                     const AttentionBackwardConfig& config) {
  return (problem.shape.seq_q + config.block_m - 1) / config.block_m;
}

int attention_backward_shared_bytes(const AttentionBackwardProblem& problem,
                                    const AttentionBackwardConfig& config) {
  const int head_dim = problem.shape.head_dim;
  if (config.splits_products()) {
    // templates/attention/backward/sm90/backward_ws_wide_traits.cuh: K, V, stages x (Q, dO), one
    // slot of dS^T, P^T's hand-over, stages x (L, delta), the barriers, and 1024 bytes to align.
    return 2 * config.block_n * head_dim * 2 + config.stages * 2 * config.block_m * head_dim * 2 +
           2 * config.block_n * config.block_m * 2 + config.stages * 2 * config.block_m * 4 +
           kWsWideBarrierBytes + 1024;
  }
  if (config.warp_specialized()) {
    // templates/attention/backward/sm90/backward_ws_traits.cuh: K, V, stages x (Q, dO), two
    // slots of dS^T, dQ's fp32 tile, stages x (L, delta), the barriers, and 1024 bytes to align
    // the swizzled tiles.
    return 2 * config.block_n * head_dim * 2 + config.stages * 2 * config.block_m * head_dim * 2 +
           2 * config.block_n * config.block_m * 2 +
           (config.dq_from_registers ? 0 : config.block_m * head_dim * 4) +
           config.stages * 2 * config.block_m * 4 + kWsBarrierBytes + 1024;
  }
  if (config.path == InstructionPath::wgmma) {
    // templates/attention/backward/sm90/backward_traits.cuh: K, V, stages x (Q, dO), dS^T, stages
    // x (L, delta), and 1024 bytes to align the swizzled tiles.
    return 2 * config.block_n * head_dim * 2 + config.stages * 2 * config.block_m * head_dim * 2 +
           config.block_n * config.block_m * 2 + config.stages * 2 * config.block_m * 4 + 1024;
  }
  const int kv_tiles = 2 * config.block_n * tile_row_bytes(head_dim);
  const int stage = 2 * config.block_m * tile_row_bytes(head_dim) + 2 * config.block_m * 4;
  const int ds_tile = config.block_n * tile_row_bytes(config.block_m);
  return kv_tiles + config.stages * stage + ds_tile;
}

std::string attention_backward_tile_problem(const AttentionBackwardProblem& problem,
                                            const AttentionBackwardConfig& config) {
  const int head_dim = problem.shape.head_dim;
  const std::string only_that_kernel =
      ": only the warp-specialized kernel whose two consumer warpgroups own 64 K/V rows each "
      "(wgmma, 12 warps, block_n 128) has them";
  if (config.consumers == ConsumerSync::lagged && !config.pairs_kv_warpgroups()) {
    return "consumers lagged" + only_that_kernel;
  }
  if (config.cta_pairs) {
    if (!config.pairs_kv_warpgroups()) return "cta_pairs" + only_that_kernel;
    if (config.persistence != Persistence::grid) {
      return "cta_pairs with persistence " + std::string(to_string(config.persistence)) +
             ": a pair's two CTAs take neighbouring tiles of a grid, so grid persistence only";
    }
    if (config.dq != DqAccumulation::atomic) {
      return "cta_pairs with deterministic dQ: pairs add dQ atomically only";
    }
  }
  if (config.dq_from_registers) {
    if (!config.pairs_kv_warpgroups()) return "dq_from_registers" + only_that_kernel;
    if (config.dq != DqAccumulation::atomic) {
      return "dq_from_registers with deterministic dQ: the writer adds dQ in K/V-tile order";
    }
  }
  if (config.path == InstructionPath::wgmma) return wgmma_tile_problem(head_dim, config);
  if (config.warps != 4 && config.warps != 8) {
    return "warps " + std::to_string(config.warps) + " must be 4 or 8";
  }
  if (config.block_n != 32 && config.block_n != 64 && config.block_n != 128) {
    return "block_n " + std::to_string(config.block_n) + " must be 32, 64 or 128";
  }
  const int rows_per_warp = config.block_n * d_split(head_dim) / config.warps;
  if (rows_per_warp % 16 != 0 || rows_per_warp < 16) {
    return "K/V rows per warp (block_n " + std::to_string(config.block_n) +
           (d_split(head_dim) > 1 ? " x 2 above head dim 128" : "") + " / warps " +
           std::to_string(config.warps) + ") must be whole m16 slices";
  }
  if (config.block_m != 32 && config.block_m != 64 && config.block_m != 128) {
    return "block_m " + std::to_string(config.block_m) + " must be 32, 64 or 128";
  }
  const int q_atoms = config.block_m / 16;
  if (q_atoms % config.warps != 0 && config.warps % q_atoms != 0) {
    return "dQ's " + std::to_string(q_atoms) + " m16 row slices (block_m " +
           std::to_string(config.block_m) + ") and the " + std::to_string(config.warps) +
           " warps must divide one another";
  }
  const int column_parts = config.warps > q_atoms ? config.warps / q_atoms : 1;
  if (head_dim % (16 * column_parts) != 0) {
    return "dQ's columns (head dim " + std::to_string(head_dim) + ") split over " +
           std::to_string(column_parts) + " warps must be whole n16 pairs";
  }
  if (config.stages < 1 || config.stages > 3) {
    return "stages " + std::to_string(config.stages) + " must be 1, 2 or 3";
  }
  if (config.head_group < 1) {
    return "head_group " + std::to_string(config.head_group) + " must be at least 1";
  }
  return {};
}

int estimate_attention_backward_registers(const AttentionBackwardProblem& problem,
                                          const AttentionBackwardConfig& config) {
  if (config.warp_specialized()) {
    // The entry cap of 384 threads a CTA; setmaxnreg then gives the consumers
    // backward_ws_consumer_registers (wgmma_tile_problem checks their accumulators against it).
    return 65536 / config.threads() / 8 * 8;
  }
  if (config.path == InstructionPath::wgmma) {
    // Per thread of a warpgroup (64 rows): dK and dV, head_dim / 2 registers each; S^T and dP^T,
    // block_m / 2 each.
    return problem.shape.head_dim + config.block_m + kWgmmaBookkeepingRegisters;
  }
  const int split = d_split(problem.shape.head_dim);
  const int row_atoms = config.block_n * split / config.warps / 16;
  // dK and dV: 16 rows x head_dim / split per m16 slice, over 32 lanes, twice; S^T and dP^T alike.
  const int accumulators = row_atoms * problem.shape.head_dim / split;
  const int step_blocks = row_atoms * config.block_m;
  return accumulators + step_blocks + kBookkeepingRegisters;
}

ResourceUse attention_backward_resource_use(const AttentionBackwardProblem& problem,
                                            const AttentionBackwardConfig& config,
                                            const GpuProfile& gpu, int compiled_registers) {
  CtaDemand demand;
  demand.warps = config.warps;
  demand.dynamic_shared_bytes = attention_backward_shared_bytes(problem, config);
  demand.tile_problem = instruction_path_problem(gpu, config.path);
  if (demand.tile_problem.empty()) {
    demand.tile_problem = attention_backward_tile_problem(problem, config);
  }
  demand.registers_estimated = compiled_registers < 0;
  demand.registers = demand.registers_estimated
                         ? estimate_attention_backward_registers(problem, config)
                         : compiled_registers;
  return cta_resource_use(demand, gpu);
}

BackwardWorkspaceLayout backward_workspace_layout(const AttentionBackwardProblem& problem,
                                                  const AttentionBackwardConfig& config) {
  const AttentionProblem& shape = problem.shape;
  const std::size_t heads = static_cast<std::size_t>(shape.batch) * shape.heads;
  const std::size_t padded_rows =
      static_cast<std::size_t>(backward_q_tiles(problem, config)) * config.block_m;
  BackwardWorkspaceLayout layout;
  layout.lse_log2 = 0;
  layout.delta = aligned(layout.lse_log2 + heads * padded_rows * sizeof(float));
  layout.dq_accum = aligned(layout.delta + heads * padded_rows * sizeof(float));
  layout.semaphores =
      aligned(layout.dq_accum + heads * padded_rows * shape.head_dim * sizeof(float));
  const std::size_t semaphores = config.dq == DqAccumulation::deterministic
                                     ? heads * backward_q_tiles(problem, config) * sizeof(int)
                                     : 0;
  layout.split_arrivals = aligned(layout.semaphores + semaphores);
  // Every slot a split may use, whatever the GPU's wave, so that the size stays a function of the
  // problem and the config: a count per consumer warpgroup and dK and dV of each split CTA.
  const std::size_t split_ctas =
      backward_splits_last_wave(problem, config)
          ? static_cast<std::size_t>(attention::kBackwardSplitUnits) * config.cluster_ctas()
          : 0;
  layout.split_sums =
      aligned(layout.split_arrivals + split_ctas * attention::kBackwardWsConsumerWgs * sizeof(int));
  layout.bytes =
      aligned(layout.split_sums + split_ctas * 2 * config.block_n * shape.head_dim * sizeof(float));
  return layout;
}

bool backward_splits_last_wave(const AttentionBackwardProblem& problem,
                               const AttentionBackwardConfig& config) {
  return config.pairs_kv_warpgroups() &&
         attention::backward_splits_last_wave(problem.shape.causal,
                                              config.dq == DqAccumulation::deterministic,
                                              config.swizzle == TileSwizzle::head_groups);
}

int backward_schedule_units(const AttentionBackwardProblem& problem,
                            const AttentionBackwardConfig& config) {
  const AttentionProblem& shape = problem.shape;
  const int kv_tiles = (shape.seq_kv + config.block_n - 1) / config.block_n;
  return attention::backward_tile_units(kv_tiles, config.cluster_ctas()) * shape.batch *
         shape.kv_head_count();
}

attention::BackwardLastWave backward_last_wave(const AttentionBackwardProblem& problem,
                                               const AttentionBackwardConfig& config,
                                               int wave_size) {
  const AttentionProblem& shape = problem.shape;
  const int ctas = config.cluster_ctas();
  const int units = backward_schedule_units(problem, config);
  if (!backward_splits_last_wave(problem, config) || wave_size < ctas) return {units, 1};
  const int steps = shape.heads / shape.kv_head_count() * backward_q_tiles(problem, config);
  return attention::backward_last_wave(units, wave_size / ctas, steps);
}

}  // namespace swr
