#include "runtime/attention_tensor_maps.hpp"

#include <utility>

#include "generator/resource_model.hpp"
#include "swr/runtime_options.hpp"

namespace swr {
namespace {

constexpr std::uint64_t kElementBytes = 2;

}  // namespace

TensorMapDescription attention_tensor_map_description(std::string name,
                                                      const AttentionProblem& problem,
                                                      const attention::TensorStrides& strides,
                                                      int heads, int seq, int box_rows) {
  TensorMapDescription description;
  description.name = std::move(name);
  description.element = problem.dtype == DataType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                        : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  description.rank = 4;
  description.dims = {static_cast<std::uint64_t>(problem.head_dim), static_cast<std::uint64_t>(seq),
                      static_cast<std::uint64_t>(heads), static_cast<std::uint64_t>(problem.batch),
                      0};
  // Innermost first; a dimension of extent 1 keeps whatever stride the caller gave (often 0),
  // which TMA never steps but still checks: describe it as the span of the ones inside.
  const std::pair<long long, int> outer[] = {
      {strides.seq, seq}, {strides.head, heads}, {strides.batch, problem.batch}};
  std::uint64_t span = static_cast<std::uint64_t>(problem.head_dim) * kElementBytes;
  for (int i = 0; i < 3; ++i) {
    const auto [stride, extent] = outer[i];
    const std::uint64_t bytes =
        extent > 1 ? static_cast<std::uint64_t>(stride) * kElementBytes : span;
    description.strides[i] = bytes;
    span = std::max(span, bytes * static_cast<std::uint64_t>(extent));
  }
  // One box per shared-memory chunk of the kernel's tile layout, swizzled over its row width.
  const int chunk_columns = wgmma_attention_chunk_columns(problem.head_dim);
  description.box = {static_cast<std::uint32_t>(chunk_columns),
                     static_cast<std::uint32_t>(box_rows), 1, 1, 0};
  description.swizzle_bytes = chunk_columns * 2;
  return description;
}

AttentionTensorMapDescriptions attention_tensor_map_descriptions(const AttentionProblem& problem,
                                                                 const AttentionConfig& config,
                                                                 const AttentionLayout& layout) {
  const int kv_heads = problem.kv_head_count();
  return {attention_tensor_map_description("Q", problem, layout.q, problem.heads, problem.seq_q,
                                           config.block_m),
          attention_tensor_map_description("K", problem, layout.k, kv_heads, problem.seq_kv,
                                           config.block_n),
          attention_tensor_map_description("V", problem, layout.v, kv_heads, problem.seq_kv,
                                           config.block_n)};
}

std::string attention_tensor_map_problem(const AttentionProblem& problem,
                                         const AttentionConfig& config,
                                         const AttentionLayout& layout,
                                         const AttentionPointers& pointers) {
  const AttentionTensorMapDescriptions maps =
      attention_tensor_map_descriptions(problem, config, layout);
  return TensorMapSet<3>::first_problem({maps.q, maps.k, maps.v},
                                        {pointers.q, pointers.k, pointers.v});
}

AttentionTensorMapCache::Maps AttentionTensorMapCache::maps_for(const CudaDriver& driver,
                                                                const AttentionProblem& problem,
                                                                const AttentionConfig& config,
                                                                const AttentionLayout& layout,
                                                                const AttentionPointers& pointers) {
  const AttentionTensorMapDescriptions maps =
      attention_tensor_map_descriptions(problem, config, layout);
  try {
    const TensorMapSet<3>::Maps encoded =
        maps_.maps_for(driver, {maps.q, maps.k, maps.v}, {pointers.q, pointers.k, pointers.v});
    return {encoded[0], encoded[1], encoded[2]};
  } catch (const std::invalid_argument& refused) {
    throw KernelRefused("cannot run " + config.key() + " on " + problem.key() + ": " +
                        refused.what());
  }
}

}  // namespace swr
