#include "runtime/attention_launcher.hpp"

#include <algorithm>
#include <utility>

#include "generator/kernel_source.hpp"
#include "generator/resource_model.hpp"
#include "swr/runtime_options.hpp"

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
      kernel_(driver, cubin, {kAttentionEntryName, kAttentionEntryWithoutLse}, config.threads(),
              dynamic_shared_bytes, config.key()) {}

int AttentionKernelModule::grid_size(const AttentionProblem& problem) const {
  const long long tiles = attention_tile_count(problem, config_);
  if (config_.persistence == Persistence::grid) return static_cast<int>(tiles);
  return static_cast<int>(std::min<long long>(tiles, wave_size()));
}

std::string attention_layout_refusal(const AttentionProblem& problem, const AttentionConfig& config,
                                     const AttentionLayout& layout,
                                     const AttentionBuffers& buffers) {
  if (config.is_wgmma()) {
    // Q, K and V arrive by TMA (the launch's AttentionTensorMapCache refuses what it cannot
    // describe, as attention_tensor_map_problem names it); O is written from registers, 16 bytes a
    // lane where its rows are 16-byte aligned and in 4-byte pairs otherwise.
    if (std::string why = unaligned_pointer("o", buffers.o, 4, "4-byte stores"); !why.empty())
      return why;
    return unaligned_stride("o", layout.o, problem.batch, problem.heads, problem.seq_q, 2,
                            "4-byte stores");
  }
  const std::pair<const char*, CUdeviceptr> pointers[] = {
      {"q", buffers.q}, {"k", buffers.k}, {"v", buffers.v}, {"o", buffers.o}};
  for (const auto& [name, pointer] : pointers) {
    if (std::string why = unaligned_pointer(name, pointer, 16, "16-byte copies"); !why.empty())
      return why;
  }
  const int kv_heads = problem.kv_head_count();
  constexpr const char* kCopies = "16-byte copies";
  for (const std::string& why :
       {unaligned_stride("q", layout.q, problem.batch, problem.heads, problem.seq_q, 8, kCopies),
        unaligned_stride("k", layout.k, problem.batch, kv_heads, problem.seq_kv, 8, kCopies),
        unaligned_stride("v", layout.v, problem.batch, kv_heads, problem.seq_kv, 8, kCopies),
        unaligned_stride("o", layout.o, problem.batch, problem.heads, problem.seq_q, 8, kCopies)}) {
    if (!why.empty()) return why;
  }
  return {};
}

void AttentionKernelModule::launch(const AttentionProblem& problem, const AttentionBuffers& buffers,
                                   CUstream stream, int persistent_ctas) const {
  // First, so that what the kernel cannot take is refused before anything is enqueued.
  const AttentionLayout layout = resolve_attention_layout(
      problem, buffers.q_strides, buffers.k_strides, buffers.v_strides, buffers.o_strides);
  if (std::string why = attention_layout_refusal(problem, config_, layout, buffers); !why.empty()) {
    throw KernelRefused("cannot run " + config_.key() + " on " + problem.key() + ": " + why);
  }
  if (buffers.lse != 0 && !writes_lse()) {
    throw KernelRefused("cannot write the log-sum-exp with " + config_.key() +
                        ": its cubin was exported by a build whose kernels do not (entry \"" +
                        kAttentionEntryWithoutLse + "\"); export it again with this build");
  }
  if (buffers.lse % 4 != 0) {
    throw KernelRefused("the log-sum-exp at " + std::to_string(buffers.lse) +
                        " is not 4-byte aligned, which its fp32 stores need");
  }
  AttentionTensorMapCache::Maps maps{};
  if (config_.is_wgmma()) {
    maps =
        tensor_maps_.maps_for(driver_, problem, config_, layout, {buffers.q, buffers.k, buffers.v});
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
  attention::AttentionArgs args =
      attention_launch_args(problem, layout, buffers.tile_counter, wave_size());
  float* lse = reinterpret_cast<float*>(buffers.lse);
  // The argument lists of the rendered kernels (generator/kernel_source.cpp): the tensors as
  // pointers (mma_sync) or Q, K, V as tensor maps by value (wgmma), then O, the block and the
  // log-sum-exp (an older cubin's entry, without it, reads the first five only).
  void* mma_sync_arguments[] = {&q, &k, &v, &o, &args, &lse};
  void* wgmma_arguments[] = {&maps.q.map, &maps.k.map, &maps.v.map, &o, &args, &lse};
  SWR_CU(
      driver_,
      cuLaunchKernel(kernel_.function(), grid, 1, 1, config_.threads(), 1, 1, dynamic_shared_bytes_,
                     stream, config_.is_wgmma() ? wgmma_arguments : mma_sync_arguments, nullptr));
}

}  // namespace swr
