// The GEMM's L2 traffic, replayed from its tile schedule: the block swizzle of
// templates/gemm/block_swizzle.cuh (through generator/gemm_swizzle.hpp, the host's copy of the
// same code) hands output tiles to the CTAs resident at once; the wave of CTAs walks its k blocks
// in lock step (one tick per k block), each CTA reading its A tile (block_m x block_k) and B tile
// (block_k x block_n) of that k block, and writes its C tile when done. A cluster's CTAs share
// their multicast operand (2x1: B, 1x2: A): it is read once per cluster.
//
// The reads go through the same cache model as attention's simulator (model/cache_models.hpp: an
// LRU of whole tiles, one per L2 partition, CTA slot s on partition s % partitions) with the same
// counting rules for partitions (l2_simulator.hpp): a sector another partition is fetching in the
// same tick counts (l2_shared_miss_factor - 1) / (partitions - 1) (first touch:
// l2_first_touch_miss_factor), one another partition holds counts l2_peer_fill_miss_weight, and
// only the first partition to miss reads DRAM.
#pragma once

#include <cstdint>

#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::model {

struct GemmTraffic {
  std::int64_t requested_sectors = 0;  // A and B reads, C writes
  std::int64_t compulsory_misses = 0;  // every byte of A, B and C once
  std::int64_t misses = 0;             // as the L2 counters count them
  std::int64_t dram_bytes_read = 0;
  std::int64_t dram_bytes_written = 0;  // C once
  double hit_rate = 0;
  int resident_ctas = 0;
};

// `resident_ctas`: CTAs on the GPU at once (SMs x CTAs per SM). Throws UsageError for an invalid
// problem or profile, or a replay over `max_accesses` tile reads.
GemmTraffic simulate_gemm_l2(const GemmProblem& problem, const GemmConfig& config,
                             const GpuProfile& gpu, int resident_ctas,
                             std::int64_t max_accesses = 400'000'000);

}  // namespace swr::model
