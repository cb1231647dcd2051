// Element types the kernels read and write.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace swr {

enum class DataType { f16, bf16 };

std::string_view to_string(DataType type);
std::optional<DataType> parse_data_type(std::string_view text);
std::size_t element_bytes(DataType type);

}  // namespace swr
