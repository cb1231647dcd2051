// What `swr-tune import` reads: another results database, or an export (its directory or its
// manifest.json), as measurements by identity. Each source is read and checked completely before
// the target is opened for writing, so a bad source writes nothing.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "db/records.hpp"
#include "runtime/export_manifest.hpp"

namespace swr {

struct ImportSource {
  std::filesystem::path path;
  std::string kind;  // "results database" or "export"
  std::vector<db::PortableMeasurement> measurements;
  // Measurements whose problem this build cannot read (no attention or GEMM shape row).
  std::size_t other_families = 0;
};

// Throws UsageError naming the file or the manifest field; refuses `target` itself.
ImportSource read_import_source(const std::filesystem::path& path,
                                const std::filesystem::path& target);

// The measurement behind each kernel of an export (every family): what made it the best (or the
// best deterministic backward variant), on its GPU.
std::vector<db::PortableMeasurement> export_measurements(const ExportManifest& manifest);

}  // namespace swr
