// An export directory on disk: manifest.json plus the cubins it names. Loading checks every field
// of the manifest and every cubin's size and SHA-256 before anything is handed out; writing puts
// each file in place by rename and the manifest last, so a reader never sees a half-written set.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/export_manifest.hpp"

namespace swr {

struct LoadedExport {
  std::filesystem::path directory;
  ExportManifest manifest;
  // By file name; each matches the manifest's size and SHA-256.
  std::map<std::string, std::shared_ptr<const std::vector<char>>> cubins;
};

// Accepts the directory or its manifest.json. Throws UsageError naming the field or the file.
LoadedExport load_export(const std::filesystem::path& directory_or_manifest);

// Throws UsageError unless `directory` can take an export: missing (its parent must exist), empty,
// or holding an earlier export (a manifest.json). An earlier export of another GPU than `gpu`
// (when given) is refused unless `replace_other_gpu` (--force): replacing it would remove its
// kernels. Writes nothing.
void check_export_target(const std::filesystem::path& directory, const std::string& gpu = "",
                         bool replace_other_gpu = false);

// Writes the cubins (by file name) and then the manifest. Cubins an earlier export in the
// directory listed and this one does not are removed afterwards.
void write_export(const std::filesystem::path& directory, const ExportManifest& manifest,
                  const std::map<std::string, std::vector<char>>& cubins);

// Every kernel of the lists with its field path in the manifest ("kernels[0]", "gemm_kernels[2]",
// "backward_kernels[1]"), in the manifest's order.
std::vector<std::pair<const ExportedKernelBase*, std::string>> exported_kernels(
    const ExportManifest& manifest);

// The SHA-256 of a cubin, as the manifest writes it.
std::string cubin_sha256(const std::vector<char>& cubin);

}  // namespace swr
