#include "runtime/attention_backward/backward_launcher.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "runtime/attention_layout.hpp"
#include "runtime/attention_tensor_maps.hpp"
#include "swr/runtime_options.hpp"
#include "templates/attention/backward/backward_schedule.cuh"

namespace swr {

BackwardLayout resolve_backward_layout(const AttentionProblem& shape,
                                       const AttentionBackwardBuffers& buffers) {
  const int kv_heads = shape.kv_head_count();
  const auto query = [&](const char* name, const ElementStrides& given) {
    return resolve_tensor_strides(name, given, shape, shape.heads, shape.seq_q);
  };
  const auto key = [&](const char* name, const ElementStrides& given) {
    return resolve_tensor_strides(name, given, shape, kv_heads, shape.seq_kv);
  };
  return {query("q", buffers.q_strides),    key("k", buffers.k_strides),
          key("v", buffers.v_strides),      query("o", buffers.o_strides),
          query("dO", buffers.d_o_strides), query("dQ", buffers.dq_strides),
          key("dK", buffers.dk_strides),    key("dV", buffers.dv_strides)};
}

TensorMapSet<4>::Descriptions backward_tensor_map_descriptions(
    const AttentionBackwardProblem& problem, const AttentionBackwardConfig& config,
    const BackwardLayout& layout) {
  const AttentionProblem& shape = problem.shape;
  const int kv_heads = shape.kv_head_count();
  return {attention_tensor_map_description("Q", shape, layout.q, shape.heads, shape.seq_q,
                                           config.block_m),
          attention_tensor_map_description("K", shape, layout.k, kv_heads, shape.seq_kv,
                                           config.block_n),
          attention_tensor_map_description("V", shape, layout.v, kv_heads, shape.seq_kv,
                                           config.block_n),
          attention_tensor_map_description("dO", shape, layout.d_o, shape.heads, shape.seq_q,
                                           config.block_m)};
}

std::string backward_buffers_refusal(const AttentionBackwardProblem& problem,
                                     const AttentionBackwardConfig& config,
                                     const BackwardLayout& layout,
                                     const AttentionBackwardBuffers& buffers) {
  const AttentionProblem& shape = problem.shape;
  const int kv_heads = shape.kv_head_count();
  constexpr const char* kCopies = "16-byte copies";
  struct Tensor {
    const char* name;
    CUdeviceptr pointer;
    const attention::TensorStrides& strides;
    int heads;
    int seq;
  };
  const Tensor tensors[] = {{"q", buffers.q, layout.q, shape.heads, shape.seq_q},
                            {"k", buffers.k, layout.k, kv_heads, shape.seq_kv},
                            {"v", buffers.v, layout.v, kv_heads, shape.seq_kv},
                            {"o", buffers.o, layout.o, shape.heads, shape.seq_q},
                            {"dO", buffers.d_o, layout.d_o, shape.heads, shape.seq_q},
                            {"dQ", buffers.dq, layout.dq, shape.heads, shape.seq_q},
                            {"dK", buffers.dk, layout.dk, kv_heads, shape.seq_kv},
                            {"dV", buffers.dv, layout.dv, kv_heads, shape.seq_kv}};
  for (const Tensor& tensor : tensors) {
    if (tensor.pointer == 0) return std::string(tensor.name) + " is a null pointer";
    if (std::string why = unaligned_pointer(tensor.name, tensor.pointer, 16, kCopies);
        !why.empty()) {
      return why;
    }
    if (std::string why = unaligned_stride(tensor.name, tensor.strides, shape.batch, tensor.heads,
                                           tensor.seq, 8, kCopies);
        !why.empty()) {
      return why;
    }
  }
  if (buffers.lse == 0) {
    return "the log-sum-exp is a null pointer (the forward writes it when asked: "
           "AttentionBuffers::lse)";
  }
  if (std::string why = unaligned_pointer("the log-sum-exp", buffers.lse, 4, "fp32 loads");
      !why.empty()) {
    return why;
  }
  const std::size_t needed = backward_workspace_layout(problem, config).bytes;
  if (buffers.workspace == 0 || buffers.workspace_bytes < needed) {
    return "the workspace of " + std::to_string(buffers.workspace_bytes) +
           " bytes is too small: " + config.key() + " on " + problem.key() + " needs " +
           std::to_string(needed);
  }
  if (std::string why = unaligned_pointer("the workspace", buffers.workspace,
                                          static_cast<int>(kBackwardWorkspaceAlignment), "lists");
      !why.empty()) {
    return why;
  }
  if (config.persistence == Persistence::dynamic && buffers.tile_counter == 0) {
    return "a dynamic-persistence variant needs a tile counter";
  }
  return {};
}

attention::BackwardArgs backward_launch_args(const AttentionBackwardProblem& problem,
                                             const AttentionBackwardConfig& config,
                                             const BackwardLayout& layout,
                                             const AttentionBackwardBuffers& buffers,
                                             int wave_size) {
  const AttentionProblem& shape = problem.shape;
  const BackwardWorkspaceLayout parts = backward_workspace_layout(problem, config);
  const auto part = [&](std::size_t offset) { return buffers.workspace + offset; };
  attention::BackwardArgs args{};
  args.batch = shape.batch;
  args.heads = shape.heads;
  args.kv_heads = shape.kv_head_count();
  args.seq_q = shape.seq_q;
  args.seq_kv = shape.seq_kv;
  args.causal_shift = shape.causal_shift();
  args.seq_q_padded = backward_q_tiles(problem, config) * config.block_m;
  const double scale = 1.0 / std::sqrt(static_cast<double>(shape.head_dim));
  args.scale = static_cast<float>(scale);
  args.scale_log2 = static_cast<float>(scale * std::numbers::log2e);
  args.wave_size = wave_size;
  args.q_tiles = backward_q_tiles(problem, config);
  args.kv_tiles = (shape.seq_kv + config.block_n - 1) / config.block_n;
  args.group_heads = shape.heads / args.kv_heads;
  const attention::BackwardLastWave split = backward_last_wave(problem, config, wave_size);
  args.split_whole = split.whole;
  args.split_parts = split.parts;
  args.tile_counter = reinterpret_cast<int*>(buffers.tile_counter);
  args.workspace.lse_log2 = reinterpret_cast<float*>(part(parts.lse_log2));
  args.workspace.delta = reinterpret_cast<float*>(part(parts.delta));
  args.workspace.dq_accum = reinterpret_cast<float*>(part(parts.dq_accum));
  args.workspace.semaphores = config.dq == DqAccumulation::deterministic
                                  ? reinterpret_cast<int*>(part(parts.semaphores))
                                  : nullptr;
  if (split.parts > 1) {
    // The counts, and the sums of the CTAs split this time (the first slots).
    const std::size_t split_ctas =
        static_cast<std::size_t>(backward_schedule_units(problem, config) - split.whole) *
        config.cluster_ctas();
    args.workspace.split_arrivals = reinterpret_cast<int*>(part(parts.split_arrivals));
    args.workspace.split_sums = reinterpret_cast<float*>(part(parts.split_sums));
    args.split_words =
        static_cast<int>((parts.split_sums - parts.split_arrivals +
                          split_ctas * 2 * config.block_n * shape.head_dim * sizeof(float)) /
                         16);
  }
  args.q = layout.q;
  args.k = layout.k;
  args.v = layout.v;
  args.o = layout.o;
  args.d_o = layout.d_o;
  args.dq = layout.dq;
  args.dk = layout.dk;
  args.dv = layout.dv;
  return args;
}

AttentionBackwardModule::AttentionBackwardModule(const CudaDriver& driver,
                                                 const std::vector<char>& cubin,
                                                 const AttentionBackwardConfig& config,
                                                 int dynamic_shared_bytes, int sm_count)
    : driver_(driver),
      config_(config),
      sm_count_(sm_count),
      kernels_(backward_module_kernels(config, dynamic_shared_bytes)),
      kernel_(driver, cubin, main_kernel(kernels_).entry, main_kernel(kernels_).block_threads,
              main_kernel(kernels_).dynamic_shared_bytes, config.key()) {
  for (std::size_t index = 0; index < kernels_.size(); ++index) {
    functions_[index] = kernels_[index].pass == BackwardPass::main
                            ? kernel_.function()
                            : kernel_.other_function(kernels_[index].entry);
  }
}

int AttentionBackwardModule::grid_size(const AttentionBackwardProblem& problem) const {
  return static_cast<int>(backward_ctas(BackwardPass::main, problem, config_, wave_size()));
}

void AttentionBackwardModule::launch(const AttentionBackwardProblem& problem,
                                     const AttentionBackwardBuffers& buffers, CUstream stream,
                                     int persistent_ctas) const {
  launch_kernels(problem, buffers, stream, persistent_ctas, true);
}

void AttentionBackwardModule::launch_main(const AttentionBackwardProblem& problem,
                                          const AttentionBackwardBuffers& buffers,
                                          CUstream stream) const {
  launch_kernels(problem, buffers, stream, 0, false);
}

void AttentionBackwardModule::launch_kernels(const AttentionBackwardProblem& problem,
                                             const AttentionBackwardBuffers& buffers,
                                             CUstream stream, int persistent_ctas,
                                             bool with_passes) const {
  const AttentionProblem& shape = problem.shape;
  const BackwardLayout layout = resolve_backward_layout(shape, buffers);
  const auto refused = [&](const std::string& why) {
    return KernelRefused("cannot run " + config_.key() + " on " + problem.key() + ": " + why);
  };
  if (std::string why = backward_buffers_refusal(problem, config_, layout, buffers); !why.empty()) {
    throw refused(why);
  }
  // The warp-specialized kernel reads Q, K, V and dO through tensor maps passed by value.
  TensorMapSet<4>::Maps maps{};
  if (config_.warp_specialized()) {
    try {
      maps =
          tensor_maps_.maps_for(driver_, backward_tensor_map_descriptions(problem, config_, layout),
                                {buffers.q, buffers.k, buffers.v, buffers.d_o});
    } catch (const std::invalid_argument& why) {
      throw refused(why.what());
    }
  }
  int grid = grid_size(problem);
  if (persistent_ctas > 0 && config_.persistence != Persistence::grid) {
    grid = std::min(grid, persistent_ctas);
  }
  if (config_.persistence == Persistence::dynamic && !buffers.tile_counter_zeroed) {
    SWR_CU(driver_, cuMemsetD32Async(buffers.tile_counter, 0, 1, stream));
  }
  attention::BackwardArgs args =
      backward_launch_args(problem, config_, layout, buffers, wave_size());
  const void* q = reinterpret_cast<const void*>(buffers.q);
  const void* k = reinterpret_cast<const void*>(buffers.k);
  const void* v = reinterpret_cast<const void*>(buffers.v);
  const void* o = reinterpret_cast<const void*>(buffers.o);
  const void* d_o = reinterpret_cast<const void*>(buffers.d_o);
  const float* lse = reinterpret_cast<const float*>(buffers.lse);
  void* dq = reinterpret_cast<void*>(buffers.dq);
  void* dk = reinterpret_cast<void*>(buffers.dk);
  void* dv = reinterpret_cast<void*>(buffers.dv);
  // The entries' argument lists (generator/attention_backward/kernel_source.cpp), by pass.
  void* preprocess_arguments[] = {&o, &d_o, &lse, &args};
  void* main_arguments[] = {&q, &k, &v, &d_o, &dk, &dv, &args};
  void* warp_specialized_arguments[] = {&maps[0].map, &maps[1].map, &maps[2].map, &maps[3].map,
                                        &dk,          &dv,          &args};
  void* postprocess_arguments[] = {&dq, &args};
  if (!with_passes && (config_.dq == DqAccumulation::deterministic || args.split_words > 0)) {
    // The preprocess zeroes the semaphores and the split parts' sums; the main kernel alone must
    // find them at 0 too, or its K/V tiles would not add in their order, or its parts would add to
    // the last run's sums.
    const BackwardWorkspaceLayout parts = backward_workspace_layout(problem, config_);
    SWR_CU(driver_, cuMemsetD32Async(buffers.workspace + parts.semaphores, 0,
                                     (parts.bytes - parts.semaphores) / sizeof(int), stream));
  }
  for (std::size_t index = 0; index < kernels_.size(); ++index) {
    const BackwardKernel& kernel = kernels_[index];
    if (!with_passes && kernel.pass != BackwardPass::main) continue;
    void** arguments = kernel.pass == BackwardPass::preprocess    ? preprocess_arguments
                       : kernel.pass == BackwardPass::postprocess ? postprocess_arguments
                       : config_.warp_specialized()               ? warp_specialized_arguments
                                                                  : main_arguments;
    const long long ctas = kernel.pass == BackwardPass::main
                               ? grid
                               : backward_ctas(kernel.pass, problem, config_, wave_size());
    SWR_CU(driver_, cuLaunchKernel(functions_[index], static_cast<unsigned>(ctas), 1, 1,
                                   kernel.block_threads, 1, 1, kernel.dynamic_shared_bytes, stream,
                                   arguments, nullptr));
  }
}

}  // namespace swr
