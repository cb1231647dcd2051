#include "cli/commands.hpp"

#include <iostream>

#include "db/database_location.hpp"
#include "db/results_database.hpp"
#include "runtime/import_sources.hpp"
#include "swr/usage_error.hpp"

namespace swr::cli {

CLI::App* add_import_command(CLI::App& app, ImportCommandOptions& options) {
  CLI::App* command = app.add_subcommand(
      "import",
      "Merge results databases or exports (manifest.json) into a results database, keeping every "
      "measurement of every family (attention, its backward and GEMM)");
  command
      ->add_option("sources", options.sources, "Results databases, export directories, manifests")
      ->type_name("SOURCE");
  add_database_option(*command, options.database, options.database_given, "Target database");
  command->add_flag("--json", options.json, "Print JSON");
  command->footer(
      "Example: swr-tune import --db all.db machine-a.db machine-b.db kernels-h100/manifest.json");
  return command;
}

int run_import_command(const ImportCommandOptions& options) {
  if (options.sources.empty()) {
    throw UsageError("missing SOURCE: allowed results databases, export directories or manifests");
  }
  const db::DatabaseLocation location = db::locate_database(
      options.database_given ? std::optional<std::string>(options.database) : std::nullopt);
  db::check_database_writable(location);
  std::vector<ImportSource> sources;
  for (const std::string& path : options.sources) {
    sources.push_back(read_import_source(path, location.path));
  }

  db::ResultsDatabase target(location.path);
  nlohmann::json report = nlohmann::json::array();
  for (const ImportSource& source : sources) {
    const db::ImportCounts counts = target.import_measurements(source.measurements);
    report.push_back({{"source", source.path.string()},
                      {"kind", source.kind},
                      {"measurements", source.measurements.size()},
                      {"added", counts.added},
                      {"already_present", counts.already_present},
                      {"other_families_skipped", source.other_families}});
    if (!options.json) {
      std::cout << "imported " << source.path.string() << " (" << source.kind
                << "): " << source.measurements.size() << " measurements, " << counts.added
                << " added, " << counts.already_present << " already present";
      if (source.other_families > 0) {
        std::cout << ", " << source.other_families
                  << " left out (their problem has no attention or GEMM shape this build reads)";
      }
      std::cout << "\n";
    }
  }
  if (options.json) {
    std::cout << nlohmann::json{{"database", location.path.string()}, {"sources", report}}.dump(2)
              << "\n";
  } else {
    std::cout << "into " << location.path.string() << "\n";
  }
  return 0;
}

}  // namespace swr::cli
