#include "tuner/tuning/family_tuning_session.hpp"

#include <cstdio>

#include "generator/attention_backward/attention_backward_family.hpp"

namespace swr {

std::string measured_outcome_text(const db::MeasurementRecord& record) {
  if (record.status != db::MeasurementStatus::ok) return failed_outcome_text(record);
  char text[200];
  std::snprintf(text, sizeof(text), "ok  %s ms  %.1f TFLOP/s  L2 misses %s  hit %s  DRAM %s GB",
                format_milliseconds(record.median_ms).c_str(), record.tflops.value_or(0),
                format_misses(record).c_str(), format_hit_rate(record.l2_hit_rate).c_str(),
                format_dram_gigabytes(record).c_str());
  return text;
}

// The families that tune through this session.
template class FamilyTuningSession<AttentionBackwardFamily>;

}  // namespace swr
