#include "swr/data_type.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace swr {

std::string_view to_string(DataType type) {
  switch (type) {
    case DataType::f16:
      return "f16";
    case DataType::bf16:
      return "bf16";
  }
  return "unknown";
}

std::optional<DataType> parse_data_type(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // The spellings PyTorch, CUDA and NumPy users reach for first.
  if (lower == "f16" || lower == "fp16" || lower == "half" || lower == "float16") {
    return DataType::f16;
  }
  if (lower == "bf16" || lower == "bfloat16") return DataType::bf16;
  return std::nullopt;
}

std::size_t element_bytes(DataType type) {
  switch (type) {
    case DataType::f16:
    case DataType::bf16:
      return 2;
  }
  return 0;
}

}  // namespace swr
