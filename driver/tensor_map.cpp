#include "driver/tensor_map.hpp"

#include <sstream>
#include <stdexcept>

namespace swr {
namespace {

constexpr std::uint64_t kElementBytes = 2;

CUtensorMapSwizzle swizzle_of(int swizzle_bytes) {
  return swizzle_bytes == 32   ? CU_TENSOR_MAP_SWIZZLE_32B
         : swizzle_bytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                               : CU_TENSOR_MAP_SWIZZLE_128B;
}

std::string hex(std::uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

bool is_sixteen_bit(CUtensorMapDataType element) {
  return element == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 || element == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
}

}  // namespace

TensorMapDescription TensorMapDescription::matrix(std::string name, CUtensorMapDataType element,
                                                  std::uint64_t rows, std::uint64_t cols,
                                                  std::uint64_t row_stride_elements,
                                                  std::uint32_t box_rows, std::uint32_t box_cols) {
  TensorMapDescription description;
  description.name = std::move(name);
  description.element = element;
  description.rank = 2;
  description.dims = {cols, rows, 0, 0, 0};
  description.strides = {row_stride_elements * kElementBytes, 0, 0, 0};
  description.box = {box_cols, box_rows, 0, 0, 0};
  return description;
}

std::string tensor_map_problem(const TensorMapDescription& d, std::uint64_t address) {
  const std::string who = d.name + ": ";
  if (!is_sixteen_bit(d.element)) return who + "element type must be fp16 or bf16";
  if (d.rank < 1 || d.rank > 5) {
    return who + "rank " + std::to_string(d.rank) + " is outside 1..5";
  }
  if (address == 0) return who + "base address is null";
  if (address % 16 != 0) {
    return who + "base address " + hex(address) + " is not 16-byte aligned (TMA needs it)";
  }
  for (int i = 0; i < d.rank; ++i) {
    const std::string dim = "dimension " + std::to_string(i);
    if (d.dims[i] == 0 || d.dims[i] > (std::uint64_t{1} << 32)) {
      return who + dim + " has " + std::to_string(d.dims[i]) + " elements; allowed 1..2^32";
    }
    if (d.box[i] == 0 || d.box[i] > 256) {
      return who + dim + ": box of " + std::to_string(d.box[i]) + " elements; allowed 1..256";
    }
  }
  if (d.swizzle_bytes != 128 && d.swizzle_bytes != 64 && d.swizzle_bytes != 32) {
    return who + "swizzle of " + std::to_string(d.swizzle_bytes) + " bytes; allowed 32, 64, 128";
  }
  const std::uint64_t inner_box_bytes = std::uint64_t{d.box[0]} * kElementBytes;
  if (inner_box_bytes % 16 != 0 || inner_box_bytes > static_cast<std::uint64_t>(d.swizzle_bytes)) {
    return who + "inner box of " + std::to_string(inner_box_bytes) + " bytes; the " +
           std::to_string(d.swizzle_bytes) + "-byte swizzle needs a multiple of 16 up to " +
           std::to_string(d.swizzle_bytes);
  }
  const std::uint64_t row_bytes = d.dims[0] * kElementBytes;
  for (int i = 1; i < d.rank; ++i) {
    const std::uint64_t stride = d.strides[i - 1];
    const std::string what = i == 1 ? "row stride" : "stride of dimension " + std::to_string(i);
    if (stride % 16 != 0) {
      return who + what + " of " + std::to_string(stride) +
             " bytes is not a multiple of 16 (TMA needs it; for a row-major 16-bit matrix the " +
             "row length must be a multiple of 8 elements)";
    }
    if (stride >= (std::uint64_t{1} << 40)) {
      return who + what + " of " + std::to_string(stride) + " bytes is not below 2^40";
    }
    // Rows must not overlap. The outer dimensions may come in any order of strides (a [B, S, H,
    // D] tensor seen as [B, H, S, D] has a head stride of one row, below the row stride), as
    // TMA allows; whether they overlap is the caller's check.
    if (i == 1 && stride < row_bytes) {
      return who + what + " of " + std::to_string(stride) + " bytes is smaller than the " +
             std::to_string(row_bytes) + " bytes the inner dimensions span";
    }
  }
  return {};
}

TensorMap encode_tensor_map(const CudaDriver& driver, const TensorMapDescription& d,
                            CUdeviceptr address) {
  if (std::string problem = tensor_map_problem(d, address); !problem.empty()) {
    throw std::invalid_argument(problem);
  }
  TensorMap encoded{};
  cuuint64_t dims[5];
  cuuint64_t strides[4];
  cuuint32_t box[5];
  cuuint32_t element_strides[5];
  for (int i = 0; i < d.rank; ++i) {
    dims[i] = d.dims[i];
    box[i] = d.box[i];
    element_strides[i] = 1;
    if (i > 0) strides[i - 1] = d.strides[i - 1];
  }
  SWR_CU(driver, cuTensorMapEncodeTiled(
                     &encoded.map, d.element, static_cast<cuuint32_t>(d.rank),
                     reinterpret_cast<void*>(address), dims, strides, box, element_strides,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_of(d.swizzle_bytes),
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return encoded;
}

void retarget_tensor_map(const CudaDriver& driver, TensorMap& map, const std::string& name,
                         CUdeviceptr address) {
  if (address == 0 || address % 16 != 0) {
    throw std::invalid_argument(name + ": base address " + hex(address) +
                                " is not 16-byte aligned (TMA needs it)");
  }
  SWR_CU(driver, cuTensorMapReplaceAddress(&map.map, reinterpret_cast<void*>(address)));
}

}  // namespace swr
