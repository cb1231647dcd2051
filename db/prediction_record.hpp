// A model's prediction for a (gpu, problem, config) triple: kept in its own table, so that a
// figure from the L2 model is never mistaken for a measurement.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "db/database_ids.hpp"

namespace swr::db {

struct PredictionRecord {
  GpuId gpu{};
  ProblemId problem{};
  ConfigId config{};

  std::string model_name;     // e.g. "closed_form", "schedule_simulator"
  std::string model_version;  // changes whenever the model's answers may change

  std::optional<double> requested_sectors;  // L2 sectors requested
  std::optional<double> sector_misses;
  std::optional<double> hit_rate;  // fraction in [0, 1]
  std::optional<double> dram_bytes;
  std::optional<double> predicted_ms;
  std::optional<double> predicted_tflops;
  bool sampled = false;  // some rounds were simulated and the rest extrapolated
  std::string note;
  // UTC, "YYYY-MM-DDTHH:MM:SS.mmmZ". Empty when recording: the database's clock fills it in.
  std::string predicted_at;
};

struct StoredPrediction {
  std::int64_t id = 0;
  std::string config_key;
  nlohmann::json config_json;
  PredictionRecord record;
};

}  // namespace swr::db
