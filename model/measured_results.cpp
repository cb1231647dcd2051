#include "model/measured_results.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "model/xz_text.hpp"
#include "swr/usage_error.hpp"

namespace swr::model {
namespace {

std::vector<std::filesystem::path> measured_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    const bool json = name.ends_with(".json") || name.ends_with(".json.xz");
    if (name.rfind("measured_", 0) == 0 && json) {
      files.push_back(entry.path());
    }
  }
  if (error || files.empty()) {
    throw UsageError("bad measurement directory '" + dir.string() +
                     "': allowed a directory with measured_*.json or measured_*.json.xz (swr-tune "
                     "show --json, xz-compressed or not)");
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::optional<double> optional_number(const nlohmann::json& variant, const char* field) {
  const auto found = variant.find(field);
  if (found == variant.end() || !found->is_number()) return std::nullopt;
  return found->get<double>();
}

template <class Problem, class Config>
std::vector<MeasuredVariantOf<Problem, Config>> read_family(const std::filesystem::path& dir,
                                                            const std::string& family) {
  std::vector<MeasuredVariantOf<Problem, Config>> variants;
  for (const std::filesystem::path& file : measured_files(dir)) {
    try {
      const nlohmann::json shown = nlohmann::json::parse(read_maybe_xz(file));
      for (const nlohmann::json& result : shown.at("results")) {
        const nlohmann::json& problem_json = result.at("problem");
        if (problem_json.value("family", std::string("attention")) != family) continue;
        const Problem problem = Problem::from_json(problem_json);
        for (const nlohmann::json& variant : result.at("variants")) {
          if (variant.value("status", "") != "ok") continue;
          MeasuredVariantOf<Problem, Config> measured;
          measured.problem = problem;
          measured.config = Config::from_json(variant.at("config"));
          measured.gpu = result.at("gpu").at("name").get<std::string>();
          measured.registers = variant.value("registers", -1);
          measured.ctas_per_sm = variant.value("blocks_per_sm", 0);
          measured.seconds = variant.at("median_ms").get<double>() / 1e3;
          measured.timed_runs = variant.value("timed_runs", 0);
          measured.misses = optional_number(variant, "l2_sector_misses");
          const std::optional<double> read = optional_number(variant, "dram_read_bytes");
          const std::optional<double> written = optional_number(variant, "dram_write_bytes");
          if (read && written) measured.dram_bytes = *read + *written;
          measured.device = result.at("gpu").at("device_name").get<std::string>();
          measured.measured_on = variant.at("measured_at").get<std::string>().substr(0, 10);
          const nlohmann::json selection =
              variant.contains("method") ? variant.at("method").value("selection", nlohmann::json())
                                         : nlohmann::json();
          if (selection.is_object()) {
            measured.predicted_rank = selection.value("predicted_rank", 0);
            measured.model_check = selection.value("check", false);
          }
          variants.push_back(std::move(measured));
        }
      }
    } catch (const std::exception& failure) {
      throw UsageError("bad measurement file '" + file.string() +
                       "': allowed swr-tune show --json output (" + failure.what() + ")");
    }
  }
  return variants;
}

}  // namespace

std::vector<MeasuredAttention> read_measured_attention(const std::filesystem::path& dir) {
  return read_family<AttentionProblem, AttentionConfig>(dir, "attention");
}

std::vector<MeasuredGemm> read_measured_gemm(const std::filesystem::path& dir) {
  return read_family<GemmProblem, GemmConfig>(dir, "gemm");
}

}  // namespace swr::model
