// On-disk cubin cache: one file per key, written atomically (temp file + rename), each entry
// carrying a checksum so that a truncated or corrupted file is detected and recompiled.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "generator/nvrtc_compiler.hpp"

namespace swr {

// Where default_directory() looks, in its order, as --help says it.
inline constexpr const char* kCubinCacheDefaultHelp =
    "default: $SWR_CACHE_DIR, else $XDG_CACHE_HOME/swr/cubins, else ~/.cache/swr/cubins";

class CubinCache {
 public:
  // Default directory: $SWR_CACHE_DIR, else $XDG_CACHE_HOME/swr/cubins, else ~/.cache/swr/cubins.
  static std::filesystem::path default_directory();

  explicit CubinCache(std::filesystem::path directory);

  const std::filesystem::path& directory() const { return directory_; }

  // Key = hash of everything that changes the binary.
  static std::string key_for(const KernelSource& source, const std::vector<std::string>& options,
                             const std::string& nvrtc_version, const std::string& arch);

  // nullopt on a miss; a corrupt entry is removed and reported as a miss.
  std::optional<CompiledKernel> load(const std::string& key) const;
  void store(const std::string& key, const CompiledKernel& kernel) const;

 private:
  std::filesystem::path directory_;
};

}  // namespace swr
