// Base64 (RFC 4648, with padding): how a cubin travels inside a JSON line to the measurement
// worker.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace swr {

std::string encode_base64(const std::vector<char>& bytes);
// Throws std::invalid_argument for text that is not padded base64.
std::vector<char> decode_base64(std::string_view text);

}  // namespace swr
