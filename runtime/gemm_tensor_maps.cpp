#include "runtime/gemm_tensor_maps.hpp"

#include <stdexcept>
#include <string>

namespace swr {
namespace {

constexpr std::uint32_t kBoxColumns = 64;  // one 128-byte swizzle row of 16-bit elements

CUtensorMapDataType map_element(DataType type) {
  return type == DataType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
}

std::uint32_t c_box_rows(const GemmConfig& config) {
  return config.consumer_mode == GemmConsumerMode::cooperative ? config.block_m / 2
                                                               : config.block_m;
}

// The pointers in the order of gemm_tensor_map_descriptions().
std::array<CUdeviceptr, 3> as_array(const GemmOperandPointers& pointers, const GemmConfig& config) {
  if (config.transposed) return {pointers.b, pointers.a, pointers.c};
  return {pointers.a, pointers.b, pointers.c};
}

}  // namespace

std::array<TensorMapDescription, 3> gemm_tensor_map_descriptions(const GemmProblem& problem,
                                                                 const GemmConfig& config) {
  const CUtensorMapDataType element = map_element(problem.dtype);
  const auto m = static_cast<std::uint64_t>(problem.m);
  const auto n = static_cast<std::uint64_t>(problem.n);
  const auto k = static_cast<std::uint64_t>(problem.k);
  const auto block_k = static_cast<std::uint32_t>(config.block_k);
  if (config.transposed) {
    // The kernel's second operand is A, its rows shared (multicast) by the cluster_m CTAs of a
    // cluster column; each stores C^T's tile as one box of C per 64 of its rows.
    const auto a_box_rows = static_cast<std::uint32_t>(config.block_n / config.cluster_m);
    const auto c_rows = static_cast<std::uint32_t>(config.block_n);
    return {TensorMapDescription::matrix("B", element, k, n, n, block_k, kBoxColumns),
            TensorMapDescription::matrix("A", element, m, k, k, a_box_rows, kBoxColumns),
            TensorMapDescription::matrix("C", element, m, n, n, c_rows, kBoxColumns)};
  }
  // The CTAs of a cluster row (1x2, 2x2) each load (and multicast) block_m / cluster_n rows of the
  // shared A tile.
  const auto a_box_rows = static_cast<std::uint32_t>(config.block_m / config.cluster_n);
  return {TensorMapDescription::matrix("A", element, m, k, k, a_box_rows, kBoxColumns),
          TensorMapDescription::matrix("B", element, k, n, n, block_k, kBoxColumns),
          TensorMapDescription::matrix("C", element, m, n, n, c_box_rows(config), kBoxColumns)};
}

std::string gemm_tensor_map_problem(const GemmProblem& problem, const GemmConfig& config,
                                    const GemmOperandPointers& pointers) {
  const std::array<TensorMapDescription, 3> descriptions =
      gemm_tensor_map_descriptions(problem, config);
  const std::array<CUdeviceptr, 3> addresses = as_array(pointers, config);
  for (std::size_t i = 0; i < descriptions.size(); ++i) {
    if (std::string why = tensor_map_problem(descriptions[i], addresses[i]); !why.empty())
      return why;
  }
  return {};
}

std::array<TensorMap, 3> GemmTensorMapCache::maps(const CudaDriver& driver,
                                                  const GemmProblem& problem,
                                                  const GemmConfig& config,
                                                  const GemmOperandPointers& pointers) {
  try {
    return maps_.maps_for(driver, gemm_tensor_map_descriptions(problem, config),
                          as_array(pointers, config));
  } catch (const std::invalid_argument& refused) {
    throw std::invalid_argument(std::string("GEMM launch: ") + refused.what());
  }
}

}  // namespace swr
