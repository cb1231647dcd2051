#include "runtime/import_sources.hpp"

#include "db/results_database.hpp"
#include "runtime/export_directory.hpp"
#include "swr/usage_error.hpp"

namespace swr {

std::vector<db::PortableMeasurement> export_measurements(const ExportManifest& manifest) {
  std::vector<db::PortableMeasurement> measurements;
  for (const ExportedKernel& kernel : manifest.kernels) {
    db::PortableMeasurement measurement;
    measurement.gpu = kernel.gpu;
    measurement.problem = kernel.problem;
    measurement.config = kernel.config;
    measurement.record = kernel.measured;
    measurements.push_back(std::move(measurement));
  }
  return measurements;
}

ImportSource read_import_source(const std::filesystem::path& path,
                                const std::filesystem::path& target) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw UsageError("bad import source '" + path.string() + "': no such file or directory");
  }
  if (std::filesystem::exists(target, error) && std::filesystem::equivalent(path, target, error)) {
    throw UsageError("bad import source '" + path.string() + "': it is the target database");
  }
  ImportSource source;
  source.path = path;
  if (std::filesystem::is_directory(path) || path.filename() == kManifestFileName) {
    source.kind = "export";
    // The cubins are checked too: a damaged export is refused whole.
    source.measurements = export_measurements(load_export(path).manifest);
    return source;
  }
  source.kind = "results database";
  const db::ResultsDatabase database(path, db::OpenMode::read_only);
  source.measurements = database.portable_measurements(&source.other_families);
  return source;
}

}  // namespace swr
