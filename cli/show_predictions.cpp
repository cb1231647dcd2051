#include "cli/show_views.hpp"

#include "swr/gpu_profile.hpp"
#include "tuner/text_format.hpp"
#include "tuner/tuning/result_table.hpp"

namespace swr::cli {

std::vector<GpuPredictions> stored_predictions(
    const db::ResultsDatabase& database, db::ProblemId problem,
    const std::optional<std::set<std::int64_t>>& gpu_ids) {
  // Predictions are made for built-in profiles (a GPU that is here gets measured instead).
  std::vector<db::StoredGpu> candidates;
  for (const GpuProfile& profile : builtin_gpu_profiles()) {
    for (db::StoredGpu& gpu : database.gpus_named(profile.name)) {
      if (!gpu_ids || gpu_ids->count(raw(gpu.id)) > 0) candidates.push_back(std::move(gpu));
    }
  }
  std::vector<GpuPredictions> found;
  for (db::StoredGpu& gpu : candidates) {
    std::vector<db::StoredPrediction> predictions = database.predictions_for(gpu.id, problem);
    if (!predictions.empty()) found.push_back({std::move(gpu), std::move(predictions)});
  }
  return found;
}

void print_predictions(std::ostream& out, const std::string& problem_key,
                       const GpuPredictions& predicted) {
  out << problem_key << " on " << predicted.gpu.gpu.name << " (" << predicted.gpu.gpu.device_name
      << "): " << predicted.predictions.size()
      << " variants PREDICTED by the L2 model, not measured\n";
  TextTable table(
      {"variant", ">predicted ms", ">TFLOP/s", ">L2 misses", ">hit rate", "model", "predicted at"});
  for (const db::StoredPrediction& prediction : predicted.predictions) {
    const db::PredictionRecord& record = prediction.record;
    table.add_row(
        {prediction.config_key, format_milliseconds(record.predicted_ms),
         format_tflops(record.predicted_tflops), format_count(record.sector_misses),
         format_hit_rate(record.hit_rate),
         record.model_name + " v" + record.model_version + (record.sampled ? " (sampled)" : ""),
         record.predicted_at});
  }
  table.print(out, "  ");
}

nlohmann::json predictions_json(const GpuPredictions& predicted) {
  nlohmann::json list = nlohmann::json::array();
  for (const db::StoredPrediction& prediction : predicted.predictions) {
    const db::PredictionRecord& record = prediction.record;
    const auto optional = [](const std::optional<double>& value) {
      return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
    };
    list.push_back({{"config_key", prediction.config_key},
                    {"config", prediction.config_json},
                    {"model", record.model_name},
                    {"model_version", record.model_version},
                    {"requested_sectors", optional(record.requested_sectors)},
                    {"l2_sector_misses", optional(record.sector_misses)},
                    {"l2_hit_rate", optional(record.hit_rate)},
                    {"dram_bytes", optional(record.dram_bytes)},
                    {"predicted_ms", optional(record.predicted_ms)},
                    {"predicted_tflops", optional(record.predicted_tflops)},
                    {"sampled", record.sampled},
                    {"note", record.note},
                    {"predicted_at", record.predicted_at}});
  }
  return {{"gpu", predicted.gpu.gpu.name}, {"kind", "prediction"}, {"variants", list}};
}

}  // namespace swr::cli
