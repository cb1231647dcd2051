// Text that may be xz-compressed: bench/results keeps its large JSON files (`swr-tune show --json`
// dumps, the time model's calibration) as FILE.json.xz (xz -9), and the model reads them as it
// would read FILE.json.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace swr::model {

// The bytes of `file`, decompressed when its name ends in ".xz" (liblzma). Throws
// std::runtime_error naming the file when it cannot be read or is not whole xz data.
std::string read_maybe_xz(const std::filesystem::path& file);

// The decompressed bytes of whole xz data (`what` names it in the error); throws
// std::runtime_error when the data is not whole xz data.
std::string decompress_xz(std::string_view compressed, const std::string& what);

}  // namespace swr::model
