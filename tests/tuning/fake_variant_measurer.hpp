// A VariantMeasurer without a device, for the session tests: plausible figures that differ per
// config, failures on command, and hooks to interrupt or slow a run after a given variant.
#pragma once

#include <chrono>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tuner/tuning/variant_measurer.hpp"

namespace swr::testing {

class FakeVariantMeasurer : public VariantMeasurer {
 public:
  std::vector<std::string> measured_keys;  // in the order asked
  std::vector<std::string> counted_keys;   // those asked with their L2 counters
  std::set<std::uint64_t> seeds;           // of the inputs asked for
  std::set<std::string> wrong_keys;        // these come back as wrong_result
  bool counters_unavailable = false;
  std::chrono::milliseconds delay{0};  // per variant, for time budgets
  std::function<void(int measured_so_far)> after_each;
  std::function<bool(const VariantJob&)> drop_when;  // a second Ctrl-C during this one
  // A broken device: every variant kills the worker, or the worker never starts.
  bool every_worker_dies = false;
  bool cannot_start = false;
  std::set<std::string> fault_keys;  // these kill the worker, on any device

  VariantOutcome measure(const VariantJob& job) override {
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    VariantOutcome outcome;
    const std::string key = job.config.key();
    if (cannot_start) {
      throw std::runtime_error("the measurement worker could not start: fake device is gone");
    }
    if (every_worker_dies || fault_keys.count(key) > 0) {
      measured_keys.push_back(key);
      outcome.status = db::MeasurementStatus::fault;
      outcome.error = "the measurement worker died while measuring: fake (" +
                      std::string(every_worker_dies ? "device" : "variant") + ")";
      return outcome;
    }
    if (drop_when && drop_when(job)) {
      outcome.dropped = true;
      return outcome;
    }
    measured_keys.push_back(key);
    seeds.insert(job.seed);
    if (job.collect_counters) counted_keys.push_back(key);
    received_cubin_bytes = job.cubin.size();
    // A time that differs per config, so that there is a fastest one.
    const double time_ms = 1.0 + static_cast<double>(std::hash<std::string>{}(key) % 1000) / 100.0;
    outcome.times_ms = {time_ms * 1.02, time_ms, time_ms * 0.99, time_ms * 1.5};
    outcome.relative_error = 3e-4;
    if (!job.collect_counters) {
      outcome.counters_skipped = true;
    } else if (counters_unavailable) {
      outcome.counters_unavailable = "profiling unavailable: fake reason";
      outcome.method["counters"] = "unavailable: fake reason";
    } else {
      outcome.counters.l2_sectors_from_tex = 1e8;
      outcome.counters.l2_sector_misses_from_tex = time_ms * 1e7;
      outcome.counters.l2_hit_rate_percent = 64.0;
      outcome.counters.dram_bytes_read = time_ms * 3.2e8;
      outcome.counters.dram_bytes_written = 4e6;
      outcome.counters.dram_source = "dram__bytes";
    }
    outcome.registers = 168;
    outcome.blocks_per_sm = 1;
    outcome.method["fake"] = true;
    // Where the host time went: 2 ms checking and timing, 3 ms more for its own counters.
    outcome.method["host_ms"] = {{"load", 0.5},
                                 {"check_time_count", job.collect_counters ? 5.0 : 2.0},
                                 {"counters", job.collect_counters ? 3.0 : 0.0}};
    if (wrong_keys.count(key) > 0) {
      outcome.status = db::MeasurementStatus::wrong_result;
      outcome.error = "wrong result: relative error 0.5 (fake)";
      outcome.times_ms.clear();
    }
    if (after_each) after_each(static_cast<int>(measured_keys.size()));
    return outcome;
  }

  // Batches (measure_batch) of at most this many; 1: none.
  std::size_t batch = 1;
  std::vector<std::vector<std::string>> batches;  // the keys of each batch asked
  // Called with the batch's number (1, 2, ...) before it is measured: a kill -9 mid-batch.
  std::function<void(int batch_number)> before_batch;

  std::size_t batch_size() const override { return batch; }
  std::vector<VariantOutcome> measure_batch(const std::vector<VariantJob>& jobs) override {
    std::vector<std::string>& keys = batches.emplace_back();
    for (const VariantJob& job : jobs) keys.push_back(job.config.key());
    if (before_batch) before_batch(static_cast<int>(batches.size()));
    return VariantMeasurer::measure_batch(jobs);
  }

  std::size_t received_cubin_bytes = 0;
};

}  // namespace swr::testing
