// What one replay counted, per tensor, and how the whole problem's numbers follow from it:
// copied when the replay ran to the end, extrapolated when it was stopped early (sampled).
#pragma once

#include <array>
#include <cstdint>

#include "model/closed_form_traffic.hpp"
#include "model/l2_simulator.hpp"

namespace swr::model {

inline constexpr int kTensorCount = 4;  // Q, K, V, O in TensorKind order

// "Cold" counts come from the tick in which a tile was first touched (the whole wave reading it
// together), "warm" ones from every later read.
struct Tally {
  std::array<std::int64_t, kTensorCount> requested{};
  std::array<std::int64_t, kTensorCount> first_touch{};     // sectors of tiles touched first
  std::array<std::int64_t, kTensorCount> cold_requested{};  // requested in first-touch ticks
  std::array<double, kTensorCount> cold_misses{};           // counted misses in first-touch ticks
  std::array<double, kTensorCount> warm_misses{};
  std::array<std::int64_t, kTensorCount> cold_dram{};  // sectors read from DRAM
  std::array<std::int64_t, kTensorCount> warm_dram{};
  std::int64_t finished_tiles = 0;
};

// Fills requested, compulsory, misses, DRAM bytes and hit rate of `result`. Sampled: per tensor,
// each compulsory sector brings as many reads and misses as a first-touched sector did in the
// sample, and the remaining reads miss at the sample's re-read rate; a tensor the sample never
// touched (O before any tile ended) misses once per byte.
void fill_result(const Tally& tally, const ClosedFormTraffic& closed_form, bool sampled,
                 int sector_bytes, SimulationResult& result);

}  // namespace swr::model
