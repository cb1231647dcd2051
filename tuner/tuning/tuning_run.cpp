#include "tuner/tuning/tuning_run.hpp"

#include <cctype>
#include <cstdio>

#include "tuner/device_random_fill.hpp"
#include "tuner/text_format.hpp"

namespace swr {

std::vector<std::string> measurer_names(const TuningSettings& settings, std::size_t count) {
  if (settings.device_names.size() == count) return settings.device_names;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < count; ++i) names.push_back("device " + std::to_string(i));
  return names;
}

std::string first_error_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::string failed_outcome_text(const db::MeasurementRecord& record) {
  std::string status(db::to_string(record.status));
  for (char& c : status) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return status + "  " + first_error_line(record.error);
}

TuningRun::TuningRun(const TuningSettings& settings, const InterruptFlag& interrupt,
                     TuningSummary& summary)
    : settings_(settings),
      interrupt_(interrupt),
      summary_(summary),
      start_(Clock::now()),
      input_seed_(fresh_random_seed()),
      database_(settings.database) {
  db::GpuRecord gpu_record = db::GpuRecord::from_profile(settings_.gpu);
  gpu_record.driver_version = settings_.driver_version;
  gpu_id_ = database_.find_gpu(gpu_record);
}

bool TuningRun::should_stop() {
  if (interrupt_.stop_requested()) {
    summary_.interrupted = true;
    return true;
  }
  if (settings_.time_budget_seconds &&
      std::chrono::duration<double>(Clock::now() - start_).count() >=
          *settings_.time_budget_seconds) {
    summary_.budget_reached = true;
    return true;
  }
  return false;
}

void TuningRun::say(const std::string& line) {
  if (display_) display_->finish();
  std::cout << line << "\n" << std::flush;
}

void TuningRun::notice(const std::string& line) {
  if (display_) display_->finish();
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

bool TuningRun::accept(const VariantOutcome& outcome) {
  if (outcome.dropped) {
    summary_.interrupted = true;
    return false;
  }
  if (!outcome.counters_unavailable.empty() && !said_counters_unavailable_) {
    said_counters_unavailable_ = true;
    if (display_) display_->finish();
    std::fprintf(stderr, "swr-tune: %s; L2 counters are stored as missing, timing goes on\n",
                 outcome.counters_unavailable.c_str());
  }
  return true;
}

void TuningRun::record(const db::MeasurementRecord& record, const std::string& config_key,
                       const std::string& problem_key, const std::string& outcome_text,
                       const std::string& device_name) {
  database_.record_measurement(record);
  ++summary_.recorded;
  if (record.status != db::MeasurementStatus::ok) ++summary_.failed;
  std::string key = config_key;
  key.resize(std::max(key.size(), key_width_), ' ');
  std::string line = display_->next_counter() + " " + key + "  " + outcome_text;
  std::string where = problem_ids_.size() > 1 ? problem_key : "";
  if (!device_name.empty()) where += (where.empty() ? "" : ", ") + device_name;
  if (!where.empty()) line += "  (" + where + ")";
  DeviceTime& device = device_times_[device_name];
  const VariantTime time = variant_time(record.method);
  device.sum.timing_ms += time.timing_ms;
  device.sum.counters_ms += time.counters_ms;
  device.sum.load_ms += time.load_ms;
  device.sum.profiler_wait_ms += time.profiler_wait_ms;
  ++device.variants;
  display_->set_detail(time_split_detail());
  display_->item_done(line);
}

std::string TuningRun::time_split_detail() const {
  // The ETA comes from the elapsed time, so it counts the counters and every wait; this says how
  // much of each device's measuring the counters are.
  std::string detail;
  for (const auto& [name, device] : device_times_) {
    const double busy = device.sum.timing_ms + device.sum.counters_ms + device.sum.load_ms +
                        device.sum.profiler_wait_ms;
    if (busy <= 0) continue;
    char text[128];
    std::snprintf(text, sizeof(text), "%s%scounters %.0f%%", detail.empty() ? "" : ", ",
                  name.empty() ? "" : (name + " ").c_str(), 100.0 * device.sum.counters_ms / busy);
    detail += text;
    if (device.sum.profiler_wait_ms > 0.01 * busy) {
      std::snprintf(text, sizeof(text), " + waiting for the profiler %.0f%%",
                    100.0 * device.sum.profiler_wait_ms / busy);
      detail += text;
    }
  }
  return detail;
}

void TuningRun::say_time_split(double seconds) const {
  for (const auto& [name, device] : device_times_) {
    if (device.variants == 0) continue;
    const double timing = device.sum.timing_ms / 1000.0;
    const double counters = device.sum.counters_ms / 1000.0;
    const double load = device.sum.load_ms / 1000.0;
    const double wait = device.sum.profiler_wait_ms / 1000.0;
    const double other = std::max(0.0, seconds - timing - counters - load - wait);
    std::printf(
        "time split%s%s: check and timing %s, L2 counters %s (%.1f ms a variant), waiting for the "
        "profiler %s, loading %s, other %s (compiling, worker start-up and round trips)\n",
        name.empty() ? "" : " on ", name.c_str(), format_duration(timing).c_str(),
        format_duration(counters).c_str(), device.sum.counters_ms / device.variants,
        format_duration(wait).c_str(), format_duration(load).c_str(),
        format_duration(other).c_str());
  }
  std::fflush(stdout);
}

void TuningRun::note_counter_policy(db::MeasurementRecord& record) const {
  if (record.counter_status == db::CounterStatus::skipped_by_policy) {
    record.counter_note = skipped_counters_note(settings_.counters, settings_.counters_top);
  }
}

void TuningRun::finish_progress() {
  if (display_) display_->finish();
}

void TuningRun::say_everything_measured() const {
  std::cout << "everything is measured (--retune measures again)\n";
}

void TuningRun::say_closing() const {
  const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  std::cout << "\nmeasured " << summary_.recorded << " of " << summary_.planned << " variants in "
            << format_duration(seconds) << " (" << summary_.failed << " failed";
  if (summary_.counted_again > 0) {
    std::cout << ", " << summary_.counted_again << " of them again with counters";
  }
  std::cout << "); results in " << settings_.database.string() << "\n" << std::flush;
  say_time_split(seconds);
  if (summary_.interrupted) {
    std::fprintf(stderr,
                 "swr-tune: interrupted: %d of %d variants measured; resume with the same "
                 "command\n",
                 summary_.recorded, summary_.planned);
  } else if (summary_.budget_reached) {
    std::fprintf(stderr,
                 "swr-tune: time budget of %.0f s reached: %d of %d variants measured; the same "
                 "command measures the rest\n",
                 *settings_.time_budget_seconds, summary_.recorded, summary_.planned);
  } else if (summary_.left_for_later > 0) {
    std::fprintf(stderr,
                 "swr-tune: %d variants left for a later run (--limit); the same command "
                 "measures the next ones\n",
                 summary_.left_for_later);
  }
}

}  // namespace swr
