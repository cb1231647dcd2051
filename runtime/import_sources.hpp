// What `swr-tune import` reads: another results database, or an export (its directory or its
// manifest.json), as measurements by identity. Each source is read and checked completely before
// the target is opened for writing, so a bad source writes nothing.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "db/portable_measurement.hpp"
#include "runtime/export_manifest.hpp"

namespace swr {

struct ImportSource {
  std::filesystem::path path;
  std::string kind;  // "results database" or "export"
  std::vector<db::PortableMeasurement> measurements;
  std::size_t other_families = 0;  // measurements of a family this build does not import
};

// Throws UsageError naming the file or the manifest field; refuses `target` itself.
ImportSource read_import_source(const std::filesystem::path& path,
                                const std::filesystem::path& target);

// The measurement behind each kernel of an export: what made it the best, on its GPU.
std::vector<db::PortableMeasurement> export_measurements(const ExportManifest& manifest);

}  // namespace swr
