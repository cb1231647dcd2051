// Element types the kernels read and write.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include "swr/export.h"

namespace swr {

enum class DataType { f16, bf16 };

SWR_API std::string_view to_string(DataType type);
SWR_API std::optional<DataType> parse_data_type(std::string_view text);
SWR_API std::size_t element_bytes(DataType type);

}  // namespace swr
