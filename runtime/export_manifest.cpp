// The manifest document: format, version, and the lists of kernel entries of every family
// (runtime/manifest_entries.hpp writes and reads each entry).
#include "runtime/export_manifest.hpp"

#include <fstream>
#include <limits>

#include "runtime/manifest_entries.hpp"
#include "runtime/regular_file.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

// Far above any real export (a few hundred bytes per kernel), far below what would exhaust memory.
constexpr std::size_t kMaxManifestBytes = std::size_t{64} << 20;

}  // namespace

int required_schema_version(const ExportManifest& manifest) {
  // A reader before version 5 would not see backward modules at all.
  if (!manifest.backward_kernels.empty()) return kManifestBackwardVersion;
  // Attention kernels of this build take the launch-argument block: an older reader must refuse
  // them rather than launch them with its own argument list.
  if (!manifest.kernels.empty()) return kManifestLseVersion;
  return kManifestGemmVersion;
}

nlohmann::json manifest_to_json(const ExportManifest& manifest) {
  const int version = required_schema_version(manifest);
  nlohmann::json kernels = nlohmann::json::array();
  for (const ExportedKernel& kernel : manifest.kernels) kernels.push_back(kernel_json(kernel));
  nlohmann::json json = {{"format", kManifestFormat},
                         {"schema_version", version},
                         {"swr_version", manifest.swr_version},
                         {"created_at", manifest.created_at},
                         {"gpu", manifest.gpu},
                         {"kernels", std::move(kernels)}};
  if (version >= kManifestGemmVersion) {
    nlohmann::json gemm_kernels = nlohmann::json::array();
    for (const ExportedGemmKernel& kernel : manifest.gemm_kernels) {
      gemm_kernels.push_back(kernel_json(kernel));
    }
    json["gemm_kernels"] = std::move(gemm_kernels);
  }
  if (version >= kManifestBackwardVersion) {
    nlohmann::json backward_kernels = nlohmann::json::array();
    for (const ExportedBackwardKernel& kernel : manifest.backward_kernels) {
      backward_kernels.push_back(kernel_json(kernel));
    }
    json["backward_kernels"] = std::move(backward_kernels);
  }
  return json;
}

ExportManifest manifest_from_json(const nlohmann::json& json, const std::string& document) {
  const JsonFieldReader root(json, document);
  const std::string format = root.text("format");
  if (format != kManifestFormat) {
    root.fail("format", "is \"" + format + "\", not \"" + kManifestFormat + "\"");
  }
  ExportManifest manifest;
  manifest.schema_version =
      static_cast<int>(root.integer("schema_version", 1, std::numeric_limits<int>::max()));
  if (manifest.schema_version > kManifestSchemaVersion) {
    root.fail("schema_version", std::to_string(manifest.schema_version) +
                                    " is newer than this build reads (" +
                                    std::to_string(kManifestSchemaVersion) + ")");
  }
  manifest.swr_version = root.text("swr_version");
  manifest.created_at = root.text("created_at");
  manifest.gpu = root.text("gpu");
  const std::size_t count = root.array_size("kernels");
  for (std::size_t index = 0; index < count; ++index) {
    manifest.kernels.push_back(
        read_attention_kernel(root.element("kernels", index), manifest.schema_version));
  }
  // A list a version does not have is a contradiction, not something to skip; from the version
  // that adds it on it is required (empty when there is none).
  const auto later_list_size = [&](const char* name, int since) -> std::size_t {
    if (manifest.schema_version >= since) return root.array_size(name);
    if (json.contains(name)) {
      root.fail(name, "needs schema_version " + std::to_string(since) +
                          " or later (this manifest says " +
                          std::to_string(manifest.schema_version) + ")");
    }
    return 0;
  };
  const std::size_t gemm_count = later_list_size("gemm_kernels", kManifestGemmVersion);
  for (std::size_t index = 0; index < gemm_count; ++index) {
    manifest.gemm_kernels.push_back(read_gemm_kernel(root.element("gemm_kernels", index)));
  }
  const std::size_t backward_count = later_list_size("backward_kernels", kManifestBackwardVersion);
  for (std::size_t index = 0; index < backward_count; ++index) {
    manifest.backward_kernels.push_back(
        read_backward_kernel(root.element("backward_kernels", index)));
  }
  if (count + gemm_count + backward_count == 0) {
    root.fail("kernels", manifest.schema_version >= kManifestBackwardVersion
                             ? "lists no kernel, nor do gemm_kernels and backward_kernels"
                         : manifest.schema_version >= kManifestGemmVersion
                             ? "and gemm_kernels list no kernel"
                             : "lists no kernel");
  }
  return manifest;
}

ExportManifest read_manifest_file(const std::filesystem::path& file) {
  const std::string text = read_regular_file(file, kMaxManifestBytes, "manifest");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    // parse_error, and out_of_range for a number too large for any of JSON's number types
    // ("9e32614371": found by tests/fuzz/fuzz_import_source).
    throw UsageError(file.string() + " is not valid JSON (" + error.what() + ")");
  }
  return manifest_from_json(json, file.string());
}

}  // namespace swr
