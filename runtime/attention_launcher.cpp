#include "runtime/attention_launcher.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "generator/kernel_source.hpp"

namespace swr {

long long attention_tile_count(const AttentionProblem& problem, const AttentionConfig& config) {
  const long long q_tiles = (problem.seq_q + config.block_m - 1) / config.block_m;
  return q_tiles * problem.batch * problem.heads;
}

AttentionKernelModule::AttentionKernelModule(const CudaDriver& driver,
                                             const std::vector<char>& cubin,
                                             const AttentionConfig& config,
                                             int dynamic_shared_bytes, int sm_count)
    : driver_(driver),
      config_(config),
      dynamic_shared_bytes_(dynamic_shared_bytes),
      sm_count_(sm_count),
      kernel_(driver, cubin, kAttentionEntryName, config.threads(), dynamic_shared_bytes,
              config.key()) {}

int AttentionKernelModule::grid_size(const AttentionProblem& problem) const {
  const long long tiles = attention_tile_count(problem, config_);
  if (config_.persistence == Persistence::grid) return static_cast<int>(tiles);
  return static_cast<int>(std::min<long long>(tiles, wave_size()));
}

void AttentionKernelModule::launch(const AttentionProblem& problem, const AttentionBuffers& buffers,
                                   CUstream stream, int persistent_ctas) const {
  // First, so that tensors TMA cannot describe are refused before anything is enqueued.
  AttentionTensorMapCache::Maps maps{};
  if (config_.is_wgmma()) {
    maps = tensor_maps_.maps_for(driver_, problem, config_, {buffers.q, buffers.k, buffers.v});
  }
  int grid = grid_size(problem);
  if (persistent_ctas > 0 && config_.persistence != Persistence::grid)
    grid = std::min(grid, persistent_ctas);
  if (config_.persistence == Persistence::dynamic && !buffers.tile_counter_zeroed) {
    SWR_CU(driver_, cuMemsetD32Async(buffers.tile_counter, 0, 1, stream));
  }
  const void* q = reinterpret_cast<const void*>(buffers.q);
  const void* k = reinterpret_cast<const void*>(buffers.k);
  const void* v = reinterpret_cast<const void*>(buffers.v);
  void* o = reinterpret_cast<void*>(buffers.o);
  int batch = problem.batch, heads = problem.heads, batch_heads = batch * heads;
  int seq_q = problem.seq_q, seq_kv = problem.seq_kv;
  float scale_log2 =
      static_cast<float>(std::numbers::log2e / std::sqrt(static_cast<double>(problem.head_dim)));
  int* tile_counter = reinterpret_cast<int*>(buffers.tile_counter);
  int wave = wave_size();
  // The argument lists of the rendered kernels (generator/kernel_source.cpp): pointers for
  // mma_sync, the tensor maps by value for wgmma.
  void* mma_sync_arguments[] = {
      &q, &k, &v, &o, &batch, &heads, &seq_q, &seq_kv, &scale_log2, &tile_counter, &wave};
  void* wgmma_arguments[] = {&maps.q.map, &maps.k.map, &maps.v.map,   &o,   &batch_heads, &seq_q,
                             &seq_kv,     &scale_log2, &tile_counter, &wave};
  SWR_CU(
      driver_,
      cuLaunchKernel(kernel_.function(), grid, 1, 1, config_.threads(), 1, 1, dynamic_shared_bytes_,
                     stream, config_.is_wgmma() ? wgmma_arguments : mma_sync_arguments, nullptr));
}

}  // namespace swr
