// TMA tensor maps (CUtensorMap) for the sm_90a kernels: what a map describes, the driver's rules
// for it checked on the host first (so a pointer or stride the hardware cannot describe is refused
// by name before any launch), encoding through the run-time-loaded driver, and retargeting an
// encoded map at a new base address without encoding it again.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "driver/cuda_driver.hpp"

namespace swr {

// A dense tensor of 16-bit elements, innermost dimension first (a row-major [rows][cols] matrix is
// dims {cols, rows}); the box is the tile one TMA copy moves, swizzled in shared memory over rows
// of `swizzle_bytes` (128, 64 or 32; the box's inner extent must fit in one). Every map swr
// encodes uses 256-byte L2 promotion and no out-of-bounds fill (out-of-range elements read as zero
// and are not written).
struct TensorMapDescription {
  CUtensorMapDataType element = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  int rank = 2;                            // 1..5
  std::array<std::uint64_t, 5> dims{};     // elements per dimension
  std::array<std::uint64_t, 4> strides{};  // bytes between consecutive indices of dims[1..rank-1]
  std::array<std::uint32_t, 5> box{};      // elements per dimension of one copy
  int swizzle_bytes = 128;                 // 128, 64 or 32
  std::string name = "tensor";             // names the operand in errors ("A", "K", ...)

  // A row-major [rows][cols] matrix of 16-bit elements with rows `row_stride_elements` apart.
  static TensorMapDescription matrix(std::string name, CUtensorMapDataType element,
                                     std::uint64_t rows, std::uint64_t cols,
                                     std::uint64_t row_stride_elements, std::uint32_t box_rows,
                                     std::uint32_t box_cols);

  bool operator==(const TensorMapDescription&) const = default;
};

// Empty when cuTensorMapEncodeTiled accepts `description` at base `address`; otherwise one line
// naming the value and what is allowed ("A: base address 0x...2 is not 16-byte aligned"). Needs no
// GPU: these are the rules cuda.h documents for the call.
std::string tensor_map_problem(const TensorMapDescription& description, std::uint64_t address);

// An encoded map, 64-byte aligned as the driver requires, passed to a kernel by value
// (`const __grid_constant__` parameter; the kernel-parameter entry points at `map`).
struct alignas(128) TensorMap {
  CUtensorMap map;
};

// Encodes `description` at `address`. Throws std::invalid_argument with tensor_map_problem()'s
// line when the rules are broken, DriverError when the driver still refuses.
TensorMap encode_tensor_map(const CudaDriver& driver, const TensorMapDescription& description,
                            CUdeviceptr address);

// Points an encoded map at another base address (same shape): cheaper than encoding it again.
// Throws std::invalid_argument when `address` is not 16-byte aligned.
void retarget_tensor_map(const CudaDriver& driver, TensorMap& map, const std::string& name,
                         CUdeviceptr address);

}  // namespace swr
