#include "cli/commands.hpp"

#include <iostream>

#include "tuner/gpu_detection.hpp"
#include "tuner/json_forms.hpp"
#include "tuner/text_format.hpp"

namespace swr::cli {

namespace {

void add_profile_row(TextTable& table, const GpuProfile& gpu) {
  table.add_row({gpu.name, gpu.arch, gpu.compute_capability(), std::to_string(gpu.sm_count),
                 format_bytes(gpu.l2_bytes), format_bytes(gpu.shared_memory_per_block_optin),
                 format_rate(gpu.dram_bytes_per_second, "B/s"),
                 format_rate(gpu.peak_tensor_flops, "FLOP/s"), gpu.description});
}

TextTable profile_table() {
  return TextTable({"name", "arch", "cc", ">SMs", ">L2", ">opt-in smem", ">DRAM bandwidth",
                    ">tensor peak", "description"});
}

}  // namespace

CLI::App* add_gpus_command(CLI::App& app, GpusOptions& options) {
  CLI::App* command = app.add_subcommand(
      "gpus", "List the built-in GPU profiles and the device present on this machine");
  command->add_flag("--json", options.json, "Print JSON instead of a table");
  return command;
}

int run_gpus_command(const GpusOptions& options) {
  const std::optional<GpuProfile> present = detect_present_gpu();
  const std::string absence =
      present ? "" : "no CUDA driver/device found: " + no_present_gpu_reason();

  if (options.json) {
    nlohmann::json profiles = nlohmann::json::array();
    for (const GpuProfile& gpu : builtin_gpu_profiles()) profiles.push_back(gpu_json(gpu));
    nlohmann::json output = {{"profiles", std::move(profiles)},
                             {"present", present ? gpu_json(*present) : nlohmann::json(nullptr)}};
    if (!present) output["present_error"] = absence;
    std::cout << output.dump(2) << '\n';
    return 0;
  }

  std::cout << "built-in profiles (--gpu NAME):\n";
  TextTable table = profile_table();
  for (const GpuProfile& gpu : builtin_gpu_profiles()) add_profile_row(table, gpu);
  table.print(std::cout, "  ");
  if (present) {
    std::cout << "present device (--gpu auto):\n";
    TextTable device = profile_table();
    add_profile_row(device, *present);
    device.print(std::cout, "  ");
  } else {
    std::cout << "present device: none (" << absence << ")\n";
  }
  return 0;
}

}  // namespace swr::cli
