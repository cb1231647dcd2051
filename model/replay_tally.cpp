#include "model/replay_tally.hpp"

#include <algorithm>
#include <cmath>

#include "model/wavefront_interleaving.hpp"

namespace swr::model {
namespace {

std::int64_t get(const TensorSectors& sectors, int tensor) {
  const std::int64_t values[kTensorCount] = {sectors.q, sectors.k, sectors.v, sectors.o};
  return values[tensor];
}

void set(TensorSectors& sectors, int tensor, std::int64_t value) {
  std::int64_t* fields[kTensorCount] = {&sectors.q, &sectors.k, &sectors.v, &sectors.o};
  *fields[tensor] = value;
}

double ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0.0;
}

}  // namespace

void fill_result(const Tally& tally, const ClosedFormTraffic& closed_form, bool sampled,
                 int sector_bytes, SimulationResult& result) {
  result.requested = closed_form.requested;
  result.compulsory = closed_form.compulsory;
  double dram_sectors = 0;
  for (int tensor = 0; tensor < kTensorCount; ++tensor) {
    double misses = tally.cold_misses[tensor] + tally.warm_misses[tensor];
    double dram = static_cast<double>(tally.cold_dram[tensor] + tally.warm_dram[tensor]);
    if (sampled) {
      // Each first-touched sector brings its tick's reads (the wave reading it together) and
      // their misses; the other reads miss at the sampled rate of later re-reads. A tensor the
      // sample never touched (O before any tile ends) misses once per byte.
      const double compulsory = static_cast<double>(get(closed_form.compulsory, tensor));
      const double first = static_cast<double>(tally.first_touch[tensor]);
      const double cold_reads = static_cast<double>(tally.cold_requested[tensor]);
      const double warm_reads = static_cast<double>(tally.requested[tensor]) - cold_reads;
      const bool touched = first > 0;
      const double total_cold_reads = touched ? compulsory * cold_reads / first : compulsory;
      const double total_warm_reads =
          std::max(0.0, static_cast<double>(get(closed_form.requested, tensor)) - total_cold_reads);
      misses = (touched ? compulsory * tally.cold_misses[tensor] / first : compulsory) +
               total_warm_reads * ratio(tally.warm_misses[tensor], warm_reads);
      const double cold_dram = static_cast<double>(tally.cold_dram[tensor]);
      dram = tensor == static_cast<int>(TensorKind::o)
                 ? 0.0
                 : (touched ? compulsory * cold_dram / first : compulsory) +
                       total_warm_reads *
                           ratio(static_cast<double>(tally.warm_dram[tensor]), warm_reads);
    }
    set(result.misses, tensor, std::llround(misses));
    dram_sectors += dram;
  }
  result.dram_bytes_read = std::llround(dram_sectors) * sector_bytes;
  result.dram_bytes_written = closed_form.compulsory.o * sector_bytes;
  const double requested = static_cast<double>(result.requested.total());
  result.hit_rate =
      std::max(0.0, 1.0 - ratio(static_cast<double>(result.misses.total()), requested));
}

}  // namespace swr::model
