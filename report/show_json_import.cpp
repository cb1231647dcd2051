#include "report/show_json_import.hpp"

#include <fstream>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "model/xz_text.hpp"
#include "report/attention_pass.hpp"
#include "swr/usage_error.hpp"

namespace swr::report {
namespace {

template <typename T>
std::optional<T> optional_field(const nlohmann::json& json, const char* name) {
  if (!json.contains(name) || json[name].is_null()) return std::nullopt;
  return json[name].get<T>();
}

db::GpuRecord gpu_record(const nlohmann::json& json) {
  db::GpuRecord gpu;
  gpu.name = json.at("name").get<std::string>();
  gpu.arch = json.at("arch").get<std::string>();
  gpu.sm_count = json.at("sm_count").get<int>();
  gpu.l2_bytes = json.at("l2_bytes").get<std::int64_t>();
  gpu.device_name = json.at("device_name").get<std::string>();
  gpu.driver_version = json.value("driver_version", std::string());
  gpu.cuda_version = json.value("cuda_version", std::string());
  return gpu;
}

db::MeasurementRecord measurement_record(const nlohmann::json& json) {
  db::MeasurementRecord record;
  const std::string status = json.at("status").get<std::string>();
  const std::optional<db::MeasurementStatus> parsed = db::parse_measurement_status(status);
  if (!parsed) throw std::invalid_argument("unknown status '" + status + "'");
  record.status = *parsed;
  record.error = optional_field<std::string>(json, "error").value_or("");
  record.median_ms = optional_field<double>(json, "median_ms");
  record.p95_ms = optional_field<double>(json, "p95_ms");
  record.min_ms = optional_field<double>(json, "min_ms");
  record.timed_runs = optional_field<int>(json, "timed_runs");
  record.tflops = optional_field<double>(json, "tflops");
  record.relative_error = optional_field<double>(json, "relative_error");
  record.l2_sectors_from_tex = optional_field<double>(json, "l2_sectors_from_tex");
  record.l2_sector_misses = optional_field<double>(json, "l2_sector_misses");
  record.l2_hit_rate = optional_field<double>(json, "l2_hit_rate");
  record.dram_read_bytes = optional_field<double>(json, "dram_read_bytes");
  record.dram_write_bytes = optional_field<double>(json, "dram_write_bytes");
  record.observed_intensity = optional_field<double>(json, "observed_intensity");
  record.algorithmic_intensity = optional_field<double>(json, "algorithmic_intensity");
  record.roofline_fraction = optional_field<double>(json, "roofline_fraction");
  record.registers = optional_field<int>(json, "registers");
  record.spill_bytes = optional_field<int>(json, "spill_bytes");
  record.dynamic_shared_bytes = optional_field<int>(json, "dynamic_shared_bytes");
  record.blocks_per_sm = optional_field<int>(json, "blocks_per_sm");
  record.method = json.value("method", nlohmann::json::object());
  record.source_hash = json.value("source_hash", std::string());
  record.toolkit_version = json.value("toolkit_version", std::string());
  record.driver_version = json.value("driver_version", std::string());
  record.measured_at = json.value("measured_at", std::string());
  return record;
}

// One problem of an attention pass with its measured variants.
template <class Problem, class Config>
struct PassResults {
  Problem problem;
  std::vector<std::pair<Config, db::MeasurementRecord>> measurements;
};
using ForwardResults = PassResults<AttentionProblem, AttentionConfig>;
using BackwardResults = PassResults<AttentionBackwardProblem, AttentionBackwardConfig>;

// One (gpu, problem, measurements) entry of a document, parsed before anything is written.
struct ParsedResult {
  db::GpuRecord gpu;
  // monostate: a family the import cannot add (GEMM).
  std::variant<std::monostate, ForwardResults, BackwardResults> results;
};

template <class Results>
Results parse_pass_results(const nlohmann::json& result) {
  using Problem = decltype(Results::problem);
  using Config = typename decltype(Results::measurements)::value_type::first_type;
  Results parsed{Problem::from_json(result.at("problem")), {}};
  parsed.problem.validate();
  std::vector<nlohmann::json> measurements;
  if (result.contains("variants")) {
    measurements = result["variants"].get<std::vector<nlohmann::json>>();
  } else if (result.contains("best") && !result["best"].is_null()) {
    measurements.push_back(result["best"]);
  }
  for (const nlohmann::json& measurement : measurements) {
    parsed.measurements.emplace_back(Config::from_json(measurement.at("config")),
                                     measurement_record(measurement));
  }
  return parsed;
}

std::vector<ParsedResult> parse_document(const nlohmann::json& document) {
  std::vector<ParsedResult> parsed;
  for (const nlohmann::json& result : document.at("results")) {
    ParsedResult entry;
    entry.gpu = gpu_record(result.at("gpu"));
    const std::string family =
        result.at("problem").value("family", std::string(family_name(AttentionPass::forward)));
    if (family == family_name(AttentionPass::forward)) {
      entry.results = parse_pass_results<ForwardResults>(result);
    } else if (family == family_name(AttentionPass::backward)) {
      entry.results = parse_pass_results<BackwardResults>(result);
    }
    parsed.push_back(std::move(entry));
  }
  return parsed;
}

template <class Results>
int record_pass_results(db::ResultsDatabase& database, const db::GpuRecord& gpu_record,
                        const Results& results) {
  const db::GpuId gpu = database.upsert_gpu(gpu_record);
  const db::ProblemId problem = database.upsert_problem(results.problem);
  for (const auto& [config, measurement] : results.measurements) {
    db::MeasurementRecord record = measurement;
    record.gpu = gpu;
    record.problem = problem;
    record.config = database.upsert_config(config);
    database.record_measurement(record);
  }
  return static_cast<int>(results.measurements.size());
}

}  // namespace

ImportCount import_show_json(db::ResultsDatabase& database,
                             const std::vector<std::filesystem::path>& files) {
  std::vector<ParsedResult> everything;
  for (const std::filesystem::path& file : files) {
    if (!std::ifstream(file)) {
      throw UsageError("cannot read " + file.string() + ": allowed a readable file");
    }
    try {
      // FILE.json.xz as kept in bench/results, or plain FILE.json.
      std::vector<ParsedResult> parsed =
          parse_document(nlohmann::json::parse(model::read_maybe_xz(file)));
      everything.insert(everything.end(), parsed.begin(), parsed.end());
    } catch (const std::exception& error) {
      throw UsageError(file.string() + " is not what `swr-tune show --json` prints (" +
                       error.what() + "): allowed such a file");
    }
  }
  ImportCount count;
  for (const ParsedResult& entry : everything) {
    std::visit(
        [&](const auto& results) {
          if constexpr (std::is_same_v<std::decay_t<decltype(results)>, std::monostate>) {
            ++count.skipped_problems;
          } else {
            count.measurements += record_pass_results(database, entry.gpu, results);
          }
        },
        entry.results);
  }
  return count;
}

}  // namespace swr::report
