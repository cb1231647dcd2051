#include "runtime/attention_tensor_maps.hpp"

#include "generator/resource_model.hpp"
#include "swr/runtime_options.hpp"

namespace swr {
namespace {

TensorMapDescription head_major_description(std::string name, const AttentionProblem& problem,
                                            int seq, int box_rows) {
  const std::uint64_t row_bytes = static_cast<std::uint64_t>(problem.head_dim) * 2;
  TensorMapDescription description;
  description.name = std::move(name);
  description.element = problem.dtype == DataType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                        : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  description.rank = 3;
  description.dims = {static_cast<std::uint64_t>(problem.head_dim), static_cast<std::uint64_t>(seq),
                      static_cast<std::uint64_t>(problem.batch) * problem.heads, 0, 0};
  description.strides = {row_bytes, row_bytes * static_cast<std::uint64_t>(seq), 0, 0};
  // One box per shared-memory chunk of the kernel's tile layout, swizzled over its row width.
  const int chunk_columns = wgmma_attention_chunk_columns(problem.head_dim);
  description.box = {static_cast<std::uint32_t>(chunk_columns),
                     static_cast<std::uint32_t>(box_rows), 1, 0, 0};
  description.swizzle_bytes = chunk_columns * 2;
  return description;
}

}  // namespace

AttentionTensorMapDescriptions attention_tensor_map_descriptions(const AttentionProblem& problem,
                                                                 const AttentionConfig& config) {
  return {head_major_description("Q", problem, problem.seq_q, config.block_m),
          head_major_description("K", problem, problem.seq_kv, config.block_n),
          head_major_description("V", problem, problem.seq_kv, config.block_n)};
}

std::string attention_tensor_map_problem(const AttentionProblem& problem,
                                         const AttentionConfig& config,
                                         const AttentionPointers& pointers) {
  const AttentionTensorMapDescriptions maps = attention_tensor_map_descriptions(problem, config);
  for (const auto& [description, address] :
       {std::pair{&maps.q, pointers.q}, std::pair{&maps.k, pointers.k},
        std::pair{&maps.v, pointers.v}}) {
    if (std::string why = tensor_map_problem(*description, address); !why.empty()) return why;
  }
  return {};
}

AttentionTensorMapCache::Maps AttentionTensorMapCache::maps_for(const CudaDriver& driver,
                                                                const AttentionProblem& problem,
                                                                const AttentionConfig& config,
                                                                const AttentionPointers& pointers) {
  std::lock_guard lock(mutex_);
  const std::string shape = problem.key();
  if (shape_ == shape && pointers_ == pointers) return maps_;
  if (std::string why = attention_tensor_map_problem(problem, config, pointers); !why.empty()) {
    throw KernelRefused("cannot run " + config.key() + " on " + shape + ": " + why);
  }
  if (shape_ == shape) {
    if (pointers.q != pointers_.q) retarget_tensor_map(driver, maps_.q, "Q", pointers.q);
    if (pointers.k != pointers_.k) retarget_tensor_map(driver, maps_.k, "K", pointers.k);
    if (pointers.v != pointers_.v) retarget_tensor_map(driver, maps_.v, "V", pointers.v);
  } else {
    const AttentionTensorMapDescriptions maps = attention_tensor_map_descriptions(problem, config);
    shape_.reset();  // stays unset if an encoding throws
    maps_.q = encode_tensor_map(driver, maps.q, pointers.q);
    maps_.k = encode_tensor_map(driver, maps.k, pointers.k);
    maps_.v = encode_tensor_map(driver, maps.v, pointers.v);
    ++encodings_;
    shape_ = shape;
  }
  pointers_ = pointers;
  return maps_;
}

int AttentionTensorMapCache::encodings() const {
  std::lock_guard lock(mutex_);
  return encodings_;
}

}  // namespace swr
