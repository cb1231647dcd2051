#include "cli/commands.hpp"

#include <iostream>
#include <optional>

#include <SQLiteCpp/Database.h>

#include "db/database_file.hpp"
#include "db/database_location.hpp"
#include "db/results_database.hpp"
#include "report/bench_results.hpp"
#include "report/gnuplot.hpp"
#include "report/gpu_results.hpp"
#include "report/report_builder.hpp"
#include "report/show_json_import.hpp"
#include "support/files.hpp"
#include "swr/usage_error.hpp"

namespace swr::cli {
namespace {

// A database made from `show --json` dumps, added to a copy of `base` when given (the user's
// file is never written), in a directory of its own removed afterwards.
class ImportedDatabase {
 public:
  ImportedDatabase(const std::vector<std::string>& files,
                   const std::optional<std::filesystem::path>& base) {
    if (base) db::ResultsDatabase(*base, db::OpenMode::read_only);  // refuses a foreign file
    const std::filesystem::path copy = directory_.path() / "imported.db";
    if (base) {
      db::open_database_for_reading(*base, db::ResultsDatabase::kBusyTimeoutMs)
          ->backup(copy.c_str(), SQLite::Database::Save);
    }
    database_.emplace(copy);
    const std::vector<std::filesystem::path> paths(files.begin(), files.end());
    count_ = report::import_show_json(*database_, paths);
  }

  const db::ResultsDatabase& database() const { return *database_; }
  const report::ImportCount& count() const { return count_; }

 private:
  TemporaryDirectory directory_{"swr-report-"};
  std::optional<db::ResultsDatabase> database_;  // closed before directory_ is removed
  report::ImportCount count_;
};

std::string chosen_gpu(const db::ResultsDatabase& database, const ReportOptions& options) {
  if (!options.gpu.empty()) return options.gpu;
  const std::vector<std::string> names = report::gpus_with_results(database);
  if (names.size() == 1) return names.front();
  std::string allowed;
  for (const std::string& name : names) allowed += (allowed.empty() ? "" : ", ") + name;
  throw UsageError("--gpu is needed: " + database.path().string() + " holds " +
                   (names.empty() ? std::string("no results") : "results of " + allowed) +
                   ": allowed " + (allowed.empty() ? "a database with measurements" : allowed));
}

int write_report(const db::ResultsDatabase& database, const std::string& source_label,
                 const std::optional<report::BenchResults>& bench, const ReportOptions& options) {
  const report::GpuResults results =
      report::load_gpu_results(database, chosen_gpu(database, options));
  report::ReportInputs inputs;
  inputs.results = &results;
  inputs.bench = bench ? &*bench : nullptr;
  inputs.source_label = source_label;
  inputs.directory = options.out;
  inputs.gnuplot = report::find_gnuplot();
  const report::ReportOutcome outcome = report::build_report(inputs);

  std::cout << "report of " << results.name << " in " << inputs.directory.string() << ": "
            << outcome.index.filename().string() << " and " << outcome.pngs.size() << " charts\n";
  for (const std::string& png : outcome.pngs) std::cout << "  " << png << "\n";
  if (!inputs.gnuplot) {
    if (!outcome.pngs.empty()) {
      std::cout << "gnuplot not found on PATH: wrote each chart's data (.dat) and script (.gp), "
                   "no PNG. Install gnuplot (Debian: gnuplot-nox) and render them with:\n  "
                << outcome.render_hint << "\n";
    }
    return 0;
  }
  std::cout << outcome.rendered << " PNGs rendered by " << inputs.gnuplot->string() << "\n";
  if (!outcome.failures.empty()) {
    for (const std::string& failure : outcome.failures) std::cerr << failure << "\n";
    throw std::runtime_error(std::to_string(outcome.failures.size()) + " of " +
                             std::to_string(outcome.pngs.size()) +
                             " charts were not rendered: " + outcome.failures.front());
  }
  return 0;
}

}  // namespace

CLI::App* add_report_command(CLI::App& app, ReportOptions& options) {
  CLI::App* command = app.add_subcommand(
      "report",
      "Draw the results as PNGs (gnuplot) with an index.html: L2 misses vs S, throughput vs S "
      "against the peers, the attention backward's best variants, throughput and L2 misses, the "
      "GEMM swizzle heatmap, the roofline");
  command->add_option("--gpu", options.gpu, "The GPU to report on (as `swr-tune show` names it)")
      ->type_name("NAME");
  add_database_option(*command, options.database, options.database_given);
  command
      ->add_option("--from-json", options.show_json,
                   "`swr-tune show --json` dumps (e.g. bench/results/), alone or added to a copy "
                   "of --db")
      ->type_name("FILE...");
  command->add_option("--bench", options.bench, "results.json of bench/peer_grid.py")
      ->type_name("FILE");
  command->add_option("--out", options.out, "Directory for index.html, PNGs, data and scripts")
      ->type_name("DIR")
      ->required();
  command->footer(
      "Examples:\n"
      "  swr-tune report --gpu h200 --db results.db --out report/\n"
      "  swr-tune report --gpu h200 --from-json bench/results/l2-sweep-h200/measured_*.json \\\n"
      "      --bench bench/results/peer-grid-h200/results.json --out /tmp/report");
  return command;
}

int run_report_command(const ReportOptions& options) {
  if (options.out.empty()) throw UsageError("empty --out: allowed a directory path");
  std::error_code error;
  if (std::filesystem::exists(options.out, error) &&
      !std::filesystem::is_directory(options.out, error)) {
    throw UsageError("--out " + options.out + " is a file: allowed a directory (made if missing)");
  }
  std::optional<report::BenchResults> bench;
  if (!options.bench.empty()) bench = report::read_bench_results(options.bench);

  if (!options.show_json.empty()) {
    std::optional<std::filesystem::path> base;
    if (options.database_given) base = db::locate_database(options.database).path;
    const ImportedDatabase imported(options.show_json, base);
    std::string label = std::to_string(options.show_json.size()) +
                        " `swr-tune show --json` files (" +
                        std::to_string(imported.count().measurements) + " measurements)";
    if (options.show_json.size() <= 3) {
      label = "";
      for (const std::string& file : options.show_json) label += (label.empty() ? "" : ", ") + file;
    }
    if (base) label = base->string() + " and " + label;
    return write_report(imported.database(), label, bench, options);
  }
  const db::DatabaseLocation location = db::locate_database(
      options.database_given ? std::optional<std::string>(options.database) : std::nullopt);
  const db::ResultsDatabase database(location.path, db::OpenMode::read_only);
  return write_report(database, location.path.string(), bench, options);
}

}  // namespace swr::cli
