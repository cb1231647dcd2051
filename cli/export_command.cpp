#include "cli/commands.hpp"

#include <iostream>
#include <set>

#include "db/database_location.hpp"
#include "db/results_database.hpp"
#include "generator/cubin_cache.hpp"
#include "generator/kernel_family.hpp"
#include "runtime/export_directory.hpp"
#include "runtime/kernel_exporter.hpp"
#include "swr/usage_error.hpp"
#include "tuner/gpu_detection.hpp"
#include "tuner/tuning/result_table.hpp"

namespace swr::cli {

namespace {

// --family names one family; without it the export takes every one.
ExportFamilies parse_export_families(const std::string& family) {
  if (family.empty()) return {};
  ExportFamilies only{false, false, false};
  if (family == kAttentionFamilyName) {
    only.attention = true;
  } else if (family == kAttentionBackwardFamilyName) {
    only.attention_backward = true;
  } else if (family == kGemmFamilyName) {
    only.gemm = true;
  } else {
    throw UsageError("bad --family '" + family + "': allowed " + kFamilyNames);
  }
  return only;
}

// Tuned shapes in the manifest's backward list: a shape may have two entries (its fastest and its
// fastest deterministic variant).
std::size_t backward_shapes(const ExportManifest& manifest) {
  std::set<std::string> keys;
  for (const ExportedBackwardKernel& kernel : manifest.backward_kernels) {
    keys.insert(kernel.problem.key());
  }
  return keys.size();
}

}  // namespace

CLI::App* add_export_command(CLI::App& app, ExportCommandOptions& options) {
  CLI::App* command = app.add_subcommand(
      "export",
      "Write the best cubin of every shape tuned on a GPU (attention, its backward and GEMM), and "
      "manifest.json, for running without the database or NVRTC");
  command->add_option("--gpu", options.gpu, "GPU name as tuned (h200, ...), or auto")
      ->type_name("NAME");
  command
      ->add_option("--family", options.family,
                   std::string("Kernel family: ") + kFamilyNames + " (default: all)")
      ->type_name("NAME");
  add_database_option(*command, options.database, options.database_given);
  command->add_option("--out", options.out_dir, "Export directory (new, empty, or an export)")
      ->type_name("DIR");
  command
      ->add_option("--cache-dir", options.cache_dir,
                   std::string("Cubin cache (") + kCubinCacheDefaultHelp + ")")
      ->type_name("DIR");
  command->add_flag("--allow-changed-source", options.allow_changed_source,
                    "Export variants whose build changed since tuning, with the old figures");
  command->add_flag("--force", options.force,
                    "Replace an export of another GPU in --out (refused without it)");
  command->add_flag("--json", options.json, "Print the manifest as JSON");
  command->footer(
      "An export of another GPU in --out is refused (its kernels would be removed): choose "
      "another\n"
      "directory, or pass --force to replace it. An earlier export of the same GPU is replaced.\n"
      "Examples:\n  swr-tune export --gpu h200 --out kernels-h200/\n"
      "  swr-tune export --family gemm --gpu h200 --out gemm-kernels-h200/\n"
      "  swr-tune export --family attention-backward --gpu h200 --out backward-kernels-h200/");
  return command;
}

int run_export_command(const ExportCommandOptions& options) {
  if (options.gpu.empty()) {
    throw UsageError("missing --gpu: allowed a GPU name as tuned (h200, ...), or auto");
  }
  if (options.out_dir.empty()) throw UsageError("missing --out: allowed a directory");
  const ExportFamilies families = parse_export_families(options.family);
  check_export_target(options.out_dir, options.gpu == "auto" ? "" : options.gpu, options.force);
  const db::DatabaseLocation location = db::locate_database(
      options.database_given ? std::optional<std::string>(options.database) : std::nullopt);
  const db::ResultsDatabase database(location.path, db::OpenMode::read_only);
  const std::string gpu = options.gpu == "auto" ? resolve_gpu("auto").name : options.gpu;
  select_exports(database, gpu, families);  // an unknown GPU before NVRTC is loaded
  const std::filesystem::path cache_dir = options.cache_dir.empty()
                                              ? CubinCache::default_directory()
                                              : std::filesystem::path(options.cache_dir);
  const std::unique_ptr<CubinBuilder> builder = make_nvrtc_cubin_builder(cache_dir);

  ExportOptions export_options;
  export_options.gpu = gpu;
  export_options.families = families;
  export_options.out_dir = options.out_dir;
  export_options.allow_changed_source = options.allow_changed_source;
  export_options.replace_other_gpu = options.force;
  const ExportSummary summary = export_kernels(database, *builder, export_options);

  if (options.json) {
    std::cout << manifest_to_json(summary.manifest).dump(2) << "\n";
    return 0;
  }
  for (const std::string& changed : summary.changed_sources) {
    std::cerr << "swr-tune: warning: " << changed
              << " was measured with another build (--allow-changed-source)\n";
  }
  const auto print = [](const auto& kernel) {
    std::cout << "  " << kernel.problem.key() << "  " << kernel.config.key() << "  "
              << format_milliseconds(kernel.measured.median_ms) << " ms  " << kernel.cubin_file
              << "\n";
  };
  const ExportManifest& manifest = summary.manifest;
  for (const ExportedKernel& kernel : manifest.kernels) print(kernel);
  for (const ExportedBackwardKernel& kernel : manifest.backward_kernels) print(kernel);
  for (const ExportedGemmKernel& kernel : manifest.gemm_kernels) print(kernel);
  const std::size_t backward = backward_shapes(manifest);
  std::cout << "exported " << manifest.kernels.size() + backward + manifest.gemm_kernels.size()
            << " shapes (" << manifest.kernels.size() << " attention, " << backward
            << " attention-backward, " << manifest.gemm_kernels.size() << " GEMM; ";
  // A backward shape's second entry, its fastest deterministic variant, is counted apart.
  if (const std::size_t more = manifest.backward_kernels.size() - backward; more > 0) {
    std::cout << more << " more deterministic backward variant" << (more == 1 ? "" : "s") << "; ";
  }
  std::cout << summary.cubin_files << " cubins, " << summary.from_cache
            << " from the cubin cache) for " << gpu << " to " << options.out_dir << "\n";
  return 0;
}

}  // namespace swr::cli
