#include "runtime/export_directory.hpp"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

#include "generator/sha256.hpp"
#include "runtime/regular_file.hpp"
#include "support/files.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

// A cubin of one kernel is tens to hundreds of KiB: 256 MiB refuses a link to /dev/zero or a
// stray huge file long before memory runs out.
constexpr std::size_t kMaxCubinBytes = std::size_t{256} << 20;

std::vector<char> read_bytes(const std::filesystem::path& path) {
  const std::string bytes = read_regular_file(path, kMaxCubinBytes, "cubin");
  return std::vector<char>(bytes.begin(), bytes.end());
}

// A cubin is an ELF file: anything else (a truncated copy, a text file) is refused by name.
bool looks_like_elf(const std::vector<char>& bytes) {
  return bytes.size() >= 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' &&
         bytes[3] == 'F';
}

std::filesystem::path manifest_path_of(const std::filesystem::path& directory_or_manifest) {
  if (std::filesystem::is_directory(directory_or_manifest)) {
    return directory_or_manifest / kManifestFileName;
  }
  return directory_or_manifest;
}

}  // namespace

std::string cubin_sha256(const std::vector<char>& cubin) {
  return Sha256::hex(Sha256::digest(std::string_view(cubin.data(), cubin.size())));
}

std::vector<std::pair<const ExportedKernelBase*, std::string>> exported_kernels(
    const ExportManifest& manifest) {
  std::vector<std::pair<const ExportedKernelBase*, std::string>> kernels;
  for (std::size_t index = 0; index < manifest.kernels.size(); ++index) {
    kernels.emplace_back(&manifest.kernels[index], "kernels[" + std::to_string(index) + "]");
  }
  for (std::size_t index = 0; index < manifest.gemm_kernels.size(); ++index) {
    kernels.emplace_back(&manifest.gemm_kernels[index],
                         "gemm_kernels[" + std::to_string(index) + "]");
  }
  for (std::size_t index = 0; index < manifest.backward_kernels.size(); ++index) {
    kernels.emplace_back(&manifest.backward_kernels[index],
                         "backward_kernels[" + std::to_string(index) + "]");
  }
  return kernels;
}

LoadedExport load_export(const std::filesystem::path& directory_or_manifest) {
  const std::filesystem::path manifest_file = manifest_path_of(directory_or_manifest);
  LoadedExport loaded;
  loaded.directory = manifest_file.parent_path();
  loaded.manifest = read_manifest_file(manifest_file);
  for (const auto& [kernel, entry] : exported_kernels(loaded.manifest)) {
    const std::filesystem::path file = loaded.directory / kernel->cubin_file;
    const std::string field = manifest_file.string() + ": " + entry;
    if (const auto shared = loaded.cubins.find(kernel->cubin_file); shared != loaded.cubins.end()) {
      // Shapes that share a variant and its compiled part share one file: same size and hash.
      if (cubin_sha256(*shared->second) != kernel->cubin_sha256) {
        throw UsageError(file.string() + " does not match " + field +
                         ".cubin.sha256: the file was changed or damaged after the export");
      }
      continue;
    }
    auto bytes = std::make_shared<std::vector<char>>(read_bytes(file));
    if (bytes->size() != kernel->cubin_bytes) {
      throw UsageError(file.string() + " has " + std::to_string(bytes->size()) + " bytes, but " +
                       field + ".cubin.bytes says " + std::to_string(kernel->cubin_bytes));
    }
    if (cubin_sha256(*bytes) != kernel->cubin_sha256) {
      throw UsageError(file.string() + " does not match " + field +
                       ".cubin.sha256: the file was changed or damaged after the export");
    }
    if (!looks_like_elf(*bytes))
      throw UsageError(file.string() + " is not a cubin (no ELF header)");
    loaded.cubins.emplace(kernel->cubin_file, std::move(bytes));
  }
  return loaded;
}

void check_export_target(const std::filesystem::path& directory, const std::string& gpu,
                         bool replace_other_gpu) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(directory, error);
  if (!std::filesystem::exists(status)) {
    std::filesystem::path absolute = std::filesystem::absolute(directory);
    if (!absolute.has_filename()) absolute = absolute.parent_path();  // "out/" names "out"
    const std::filesystem::path parent = absolute.parent_path();
    if (!std::filesystem::is_directory(parent)) {
      throw UsageError("bad --out '" + directory.string() + "': its parent directory " +
                       parent.string() + " does not exist");
    }
    if (access(parent.c_str(), W_OK) != 0) {
      throw UsageError("bad --out '" + directory.string() + "': cannot create it in " +
                       parent.string() + " (no write permission)");
    }
    return;
  }
  if (!std::filesystem::is_directory(status)) {
    throw UsageError("bad --out '" + directory.string() + "': it is a file, not a directory");
  }
  if (access(directory.c_str(), W_OK) != 0) {
    throw UsageError("bad --out '" + directory.string() + "': no write permission");
  }
  const bool empty = std::filesystem::is_empty(directory);
  if (!empty && !std::filesystem::exists(directory / kManifestFileName)) {
    throw UsageError("bad --out '" + directory.string() +
                     "': it holds files but no manifest.json: allowed a new or empty directory, or "
                     "an earlier export to replace");
  }
  if (empty || gpu.empty() || replace_other_gpu) return;
  ExportManifest earlier;
  try {
    earlier = read_manifest_file(directory / kManifestFileName);
  } catch (const UsageError&) {
    return;  // a damaged export: nothing readable to lose, it is replaced
  }
  if (earlier.gpu != gpu) {
    throw UsageError("bad --out '" + directory.string() + "': it holds the export for " +
                     earlier.gpu + " (" + std::to_string(exported_kernels(earlier).size()) +
                     " kernels), which an export for " + gpu +
                     " would remove: choose another directory, or pass --force to replace it");
  }
}

void write_export(const std::filesystem::path& directory, const ExportManifest& manifest,
                  const std::map<std::string, std::vector<char>>& cubins) {
  // What an earlier export left, to remove once the new manifest is in place.
  std::set<std::string> stale;
  if (std::filesystem::exists(directory / kManifestFileName)) {
    try {
      const ExportManifest earlier = read_manifest_file(directory / kManifestFileName);
      for (const auto& [kernel, entry] : exported_kernels(earlier)) {
        stale.insert(kernel->cubin_file);
      }
    } catch (const UsageError&) {
      // An unreadable earlier manifest is replaced; its cubins stay where they are.
    }
  }
  std::filesystem::create_directories(directory);
  for (const auto& [file, bytes] : cubins) {
    write_atomically(directory / file, bytes.data(), bytes.size());
    stale.erase(file);
  }
  const std::string text = manifest_to_json(manifest).dump(2) + "\n";
  write_atomically(directory / kManifestFileName, text.data(), text.size());
  for (const std::string& file : stale) std::filesystem::remove(directory / file);
}

}  // namespace swr
