#include "runtime/import_sources.hpp"

#include <SQLiteCpp/Database.h>

#include "db/database_file.hpp"
#include "db/results_database.hpp"
#include "db/schema_migrations.hpp"
#include "runtime/export_directory.hpp"
#include "runtime/regular_file.hpp"
#include "support/files.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

// The measurements of a results database. One from an older swr (a lower schema version) is read
// from a migrated copy in the temporary directory: the source file itself is never written.
std::vector<db::PortableMeasurement> database_measurements(const std::filesystem::path& path,
                                                           std::size_t* skipped) {
  int version = 0;
  try {
    const auto raw = db::open_database_for_reading(path, db::ResultsDatabase::kBusyTimeoutMs);
    version = db::read_schema_version(*raw);
  } catch (const SQLite::Exception&) {
    // Not SQLite: ResultsDatabase below says so in its own words.
  }
  if (version == 0 || version >= db::latest_schema_version()) {
    const db::ResultsDatabase database(path, db::OpenMode::read_only);
    return database.portable_measurements(skipped);
  }
  // In a directory of its own, removed with the copy's -wal and -shm files whatever happens.
  const TemporaryDirectory directory("swr-import-");
  const std::filesystem::path copy = directory.path() / "migrated.db";
  const auto source = db::open_database_for_reading(path, db::ResultsDatabase::kBusyTimeoutMs);
  source->backup(copy.string().c_str(), SQLite::Database::Save);  // includes what is in the WAL
  const db::ResultsDatabase migrated(copy);                       // read_write: migrates the copy
  return migrated.portable_measurements(skipped);
}

}  // namespace

std::vector<db::PortableMeasurement> export_measurements(const ExportManifest& manifest) {
  std::vector<db::PortableMeasurement> measurements;
  const auto add = [&measurements](const auto& kernel) {
    db::PortableMeasurement measurement;
    measurement.gpu = kernel.gpu;
    measurement.problem = kernel.problem;
    measurement.config = kernel.config;
    measurement.record = kernel.measured;
    measurements.push_back(std::move(measurement));
  };
  for (const ExportedKernel& kernel : manifest.kernels) add(kernel);
  for (const ExportedGemmKernel& kernel : manifest.gemm_kernels) add(kernel);
  for (const ExportedBackwardKernel& kernel : manifest.backward_kernels) add(kernel);
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
  // SQLite would wait forever on a named pipe and read a device without end.
  if (const std::string why = why_not_regular_file(path); !why.empty()) {
    throw UsageError("bad import source '" + path.string() + "': " + why);
  }
  source.kind = "results database";
  try {
    source.measurements = database_measurements(path, &source.other_families);
  } catch (const nlohmann::json::exception& error) {
    // A row whose stored JSON form is damaged (found by tests/fuzz/fuzz_import_source).
    throw UsageError("bad import source '" + path.string() +
                     "': a damaged results database (a stored JSON form: " + error.what() + ")");
  }
  return source;
}

}  // namespace swr
