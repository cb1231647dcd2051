// The part of a tuning session that is the same for every family (tuning_session.hpp for
// attention, gemm_tuning_session.hpp for GEMM): which variants the database lacks (resume,
// --retune, --limit), the opening and closing words, when to stop (Ctrl-C, --time-budget), and
// the same steps for each variant: take its outcome (a dropped one stops the run; missing counters
// are said once), commit its record on its own, count it and print its progress line. The
// family's session decides how its variants compile and what its records and tables hold.
#pragma once

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/results_database.hpp"
#include "tuner/progress_display.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/tuning_plan.hpp"
#include "tuner/tuning/variant_record.hpp"

namespace swr {

// A variant the database lacks, in the order the run measures them.
template <class Config>
struct PendingVariant {
  std::size_t shape = 0;  // index into the plan's shapes
  Config config;
  db::ConfigId config_id{};  // set by TuningRun::create_rows
};

class TuningRun {
 public:
  // Starts the clock and opens the database (UsageError for one it cannot use).
  TuningRun(const TuningSettings& settings, const InterruptFlag& interrupt, TuningSummary& summary);

  db::ResultsDatabase& database() { return database_; }
  // The seed of the run's random inputs: fresh for every run, the same for both passes of
  // --counters top, so that a worker keeps a shape's inputs and reference between them (at
  // B1 H32 S32768 D64 preparing them again took about 12 s of a backward tune on the H100).
  std::uint64_t input_seed() const { return input_seed_; }
  // The rows of the GPU and of each shape's problem: found when the run starts, created by
  // create_rows; none while nothing of them is stored.
  const std::optional<db::GpuId>& gpu_id() const { return gpu_id_; }
  const std::optional<db::ProblemId>& problem_id(std::size_t shape) const {
    return problem_ids_.at(shape);
  }

  // The variants of `shapes` the database lacks on this GPU (all of them with --retune), in plan
  // order and cut at --limit. Says what the run sets out to do, each shape as
  // "tuning <family_word><problem key> on <gpu> ...".
  template <class Problem, class Config>
  std::vector<PendingVariant<Config>> find_missing(
      const std::vector<TuningShapeOf<Problem, Config>>& shapes, const std::string& family_word);

  // Creates the rows the records point to: the GPU (with the compiler's version), every shape's
  // problem and every pending config.
  template <class Problem, class Config>
  void create_rows(const std::vector<TuningShapeOf<Problem, Config>>& shapes,
                   std::vector<PendingVariant<Config>>& pending,
                   const std::string& toolkit_version);

  template <class Config>
  VariantRecordContext record_context(const PendingVariant<Config>& variant) const {
    return {*gpu_id_, *problem_ids_.at(variant.shape), variant.config_id, toolkit_version_,
            settings_.driver_version};
  }

  // The progress display of the measurements starts here; keys are padded to the longest.
  // `shared`: the display of the whole run, which counts the other sessions' variants too (a plan
  // of both families); none: this session's own.
  template <class Config>
  void start_progress(const std::vector<PendingVariant<Config>>& pending,
                      ProgressDisplay* shared = nullptr);
  // Whether to start no further variant: after Ctrl-C, or once --time-budget is spent (the
  // summary says which).
  bool should_stop();
  // Whether the run has stopped early (should_stop said so, or a variant was dropped).
  bool stopped() const { return summary_.interrupted || summary_.budget_reached; }

  // --counters top's second pass (counters_policy.hpp): per shape, the variants of its plan among
  // the settings' counters_top fastest and their walk-order twins whose current row lacks
  // counters, with their config rows; says how many it measures again. Counted in the progress.
  template <class Problem, class Config>
  std::vector<PendingVariant<Config>> counter_pass(
      const std::vector<TuningShapeOf<Problem, Config>>& shapes);
  // The measurements of a run by its counters policy: `pending` with counters (all) or without
  // (top, none); then, for top, counter_pass's variants again with them, unless the run stopped.
  // `measure(variants, collect_counters)` compiles and measures them.
  template <class Problem, class Config, class Measure>
  void measure_by_counters_policy(const std::vector<TuningShapeOf<Problem, Config>>& shapes,
                                  std::vector<PendingVariant<Config>>& pending,
                                  const Measure& measure) {
    if (!pending.empty()) measure(pending, settings_.counters == CountersPolicy::all);
    if (settings_.counters != CountersPolicy::top || stopped()) return;
    std::vector<PendingVariant<Config>> counted = counter_pass(shapes);
    if (!counted.empty()) measure(counted, true);
  }
  // A record skipped by the counters policy gets the policy's note.
  void note_counter_policy(db::MeasurementRecord& record) const;
  // A line of its own between the progress lines; notice() puts it on stderr.
  void say(const std::string& line);
  void notice(const std::string& line);
  // Takes what measuring a variant gave: false when it was dropped (a second Ctrl-C: the run
  // stops and there is nothing to record). Says once per run why the counters are missing.
  bool accept(const VariantOutcome& outcome);
  // Commits the record in its own transaction, counts it and prints its progress line: counter,
  // key, `outcome_text`, the problem when the run has several shapes and the device when it has
  // several (`device_name` not empty).
  void record(const db::MeasurementRecord& record, const std::string& config_key,
              const std::string& problem_key, const std::string& outcome_text,
              const std::string& device_name = "");
  // Clears the progress display, before the closing tables.
  void finish_progress();

  void say_everything_measured() const;
  // Per device: where its measuring time went (check and timing, L2 counters, loading) and the
  // rest of the run's `seconds` (compiling, worker start-up and round trips, waiting).
  void say_time_split(double seconds) const;
  // "device 0 counters 35%, device 1 counters 38%": the progress line's detail.
  std::string time_split_detail() const;
  // What was measured in how long and where it is; on stderr, why the run stopped early and that
  // the same command goes on from there.
  void say_closing() const;

 private:
  using Clock = std::chrono::steady_clock;

  const TuningSettings& settings_;
  const InterruptFlag& interrupt_;
  TuningSummary& summary_;
  Clock::time_point start_;  // before the database opens: the closing time counts it
  std::uint64_t input_seed_;
  db::ResultsDatabase database_;
  std::optional<db::GpuId> gpu_id_;
  std::vector<std::optional<db::ProblemId>> problem_ids_;
  std::string toolkit_version_;
  std::unique_ptr<ProgressDisplay> own_display_;
  ProgressDisplay* display_ = nullptr;  // own_display_, or the run's shared one
  std::size_t key_width_ = 0;
  bool said_counters_unavailable_ = false;
  // Per device (its name; "" on a one-device run): where its measuring time went.
  struct DeviceTime {
    VariantTime sum;
    int variants = 0;
  };
  std::map<std::string, DeviceTime> device_times_;
};

// The first line of an error message (a compiler log, a driver error).
std::string first_error_line(const std::string& text);
// A failed variant's progress text: its status in capitals and the first line of its error.
std::string failed_outcome_text(const db::MeasurementRecord& record);

template <class Problem, class Config>
std::vector<PendingVariant<Config>> TuningRun::find_missing(
    const std::vector<TuningShapeOf<Problem, Config>>& shapes, const std::string& family_word) {
  // From the database alone: a complete shape needs no compiler and no device.
  std::vector<PendingVariant<Config>> pending;
  problem_ids_.assign(shapes.size(), std::nullopt);
  for (std::size_t shape = 0; shape < shapes.size(); ++shape) {
    std::set<std::string> measured;
    problem_ids_[shape] = database_.find_problem(shapes[shape].problem);
    if (gpu_id_ && problem_ids_[shape] && !settings_.retune) {
      measured = database_.measured_config_keys(*gpu_id_, *problem_ids_[shape]);
    }
    for (const Config& config : shapes[shape].configs) {
      if (measured.count(config.key()) > 0) {
        ++summary_.already_measured;
      } else {
        pending.push_back({shape, config, {}});
      }
    }
  }
  if (settings_.limit && pending.size() > static_cast<std::size_t>(*settings_.limit)) {
    summary_.left_for_later = static_cast<int>(pending.size()) - *settings_.limit;
    pending.resize(static_cast<std::size_t>(*settings_.limit));
  }
  summary_.planned = static_cast<int>(pending.size());

  const GpuProfile& gpu = settings_.gpu;
  for (const TuningShapeOf<Problem, Config>& shape : shapes) {
    std::cout << "tuning " << family_word << shape.problem.key() << " on " << gpu.name << " ("
              << gpu.description << ", " << gpu.arch << "): " << shape.configs.size()
              << " variants\n";
  }
  std::cout << summary_.planned << " to measure, " << summary_.already_measured << " already in "
            << settings_.database.string();
  if (summary_.left_for_later > 0) {
    std::cout << ", " << summary_.left_for_later << " left for a later run (--limit)";
  }
  std::cout << "\n" << std::flush;
  return pending;
}

template <class Problem, class Config>
void TuningRun::create_rows(const std::vector<TuningShapeOf<Problem, Config>>& shapes,
                            std::vector<PendingVariant<Config>>& pending,
                            const std::string& toolkit_version) {
  toolkit_version_ = toolkit_version;
  db::GpuRecord gpu_record = db::GpuRecord::from_profile(settings_.gpu);
  gpu_record.driver_version = settings_.driver_version;
  gpu_record.cuda_version = toolkit_version;
  gpu_id_ = database_.upsert_gpu(gpu_record);
  for (std::size_t shape = 0; shape < shapes.size(); ++shape) {
    problem_ids_[shape] = database_.upsert_problem(shapes[shape].problem);
  }
  for (PendingVariant<Config>& variant : pending) {
    variant.config_id = database_.upsert_config(variant.config);
  }
}

template <class Problem, class Config>
std::vector<PendingVariant<Config>> TuningRun::counter_pass(
    const std::vector<TuningShapeOf<Problem, Config>>& shapes) {
  std::vector<PendingVariant<Config>> pending;
  if (!gpu_id_) return pending;
  for (std::size_t shape = 0; shape < shapes.size(); ++shape) {
    if (!problem_ids_.at(shape)) continue;
    const std::vector<std::string> keys = configs_needing_counters(
        database_.measurements_for(*gpu_id_, *problem_ids_[shape]), settings_.counters_top);
    for (const std::string& key : keys) {
      for (const Config& config : shapes[shape].configs) {
        if (config.key() != key) continue;
        pending.push_back({shape, config, database_.upsert_config(config)});
        break;
      }
    }
  }
  if (pending.empty()) return pending;
  summary_.planned += static_cast<int>(pending.size());
  summary_.counted_again += static_cast<int>(pending.size());
  for (const PendingVariant<Config>& variant : pending) {
    key_width_ = std::max(key_width_, variant.config.key().size());
  }
  if (display_) display_->add_to_total(static_cast<int>(pending.size()));
  say("--counters top: " + std::to_string(pending.size()) +
      " variants measured again with L2 counters (the " + std::to_string(settings_.counters_top) +
      " fastest of each shape and their walk-order twins)");
  return pending;
}

template <class Config>
void TuningRun::start_progress(const std::vector<PendingVariant<Config>>& pending,
                               ProgressDisplay* shared) {
  for (const PendingVariant<Config>& variant : pending) {
    key_width_ = std::max(key_width_, variant.config.key().size());
  }
  if (shared == nullptr) {
    own_display_ = std::make_unique<ProgressDisplay>("tuning", summary_.planned, false);
    shared = own_display_.get();
  }
  display_ = shared;
}

}  // namespace swr
