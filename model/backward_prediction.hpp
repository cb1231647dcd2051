// What the L2 model predicts for an attention backward variant: its exact schedule
// (templates/attention/backward/backward_schedule.cuh: which K/V tile each CTA owns in which
// round, its walk over the Q tiles of its group's query heads, cyclic or sawtooth) replayed
// through an LRU model of the profile's L2, the CTAs of a wave in lock-step (one Q tile a tick,
// as the forward's progress model), and a time from the DRAM bytes and the path's measured rate.
//
// Per step a CTA reads the Q and dO tiles and their L and delta lists and adds into the Q tile's
// rows of the fp32 dQ accumulator (atomics resolved in the L2: a read and a write of those
// sectors); per tile it reads its K and V tiles once and writes dK and dV once. The L2 is one LRU
// of its whole size: unlike the forward's replay, no partition keeps its own copy of the shared
// reads, since the backward's measured counters follow the single cache (the test beside it).
// The walk order matters once a head's Q and dO outgrow it.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/gpu_profile.hpp"

namespace swr::model {

// The rate the mma.sync backward reached on the H200 at head dim 128 as a fraction of the
// profile's dense tensor peak: the best variant of B2 H16 S16384 D128 bf16 (non-causal 202.9
// TFLOP/s, causal 202.1) over the h200 profile's 989 TFLOP/s, from
// bench/results/attention-backward-h200/tune-mma-sync.json (tests/model check the figure against
// that file).
inline constexpr double kMmaSyncBackwardPeakFraction = 0.205;
// The same for the wgmma backward (sm_90a): its best variant of B2 H16 S16384 D128 bf16
// non-causal, 376.6 TFLOP/s, from bench/results/attention-backward-wgmma-h200/tune-first.json
// (tests/model check it against that file).
inline constexpr double kWgmmaBackwardPeakFraction = 0.381;
// The same for the warp-specialized wgmma backward (AttentionBackwardConfig::warp_specialized):
// its best variant of the same shape, 569.0 TFLOP/s, from the whole space's tune in
// bench/results/attention-backward-ws-h200/full-tune.json (tests/model check it against that
// file).
inline constexpr double kWarpSpecializedBackwardPeakFraction = 0.575;

// What the knobs cost against that best variant (a 128-row K/V tile, 8 warps, atomic dQ), the
// medians of the same file's variants: a 64-row tile of 4 warps runs at 0.78 of its rate; a
// deterministic dQ (each Q tile's shares added in K/V-tile order, CTAs waiting their turn) at
// 0.70 non-causal and 0.61 causal, where the diagonal's short walks wait longer. Held out: the
// H200's 13 measured variants of B8 H12 S2048 D64 bf16 causal (bench/results/training-h200),
// which tests/model compares too.
inline constexpr double kNarrowTileRateShare = 0.78;
inline constexpr double kDeterministicRateShare = 0.70;
inline constexpr double kDeterministicCausalRateShare = 0.61;
// Lagged consumers (AttentionBackwardConfig::consumers) against their lockstep twins, from
// bench/results/attention-backward-ws-h200/consumer-sync-2026-11-26/consumer-sync.json (four
// schedules at eight of issue 27's D64/128 points on the H200, three rounds; tests/model recompute
// them from the file): without the causal mask the median is 0.976 of the rate; with it 1.006,
// over a spread of 0.898-1.067 that no rule here predicts, so the twins stay tied (a share above
// 1 ranked every lagged variant ahead and `--model-top` measured no lockstep one).
inline constexpr double kLaggedRateShare = 0.976;
inline constexpr double kLaggedCausalRateShare = 1.0;
// CTA pairs (AttentionBackwardConfig::cta_pairs) against their single-CTA twins, from
// bench/results/attention-backward-ws-h200/cta-pairs-2026-11-27/ab-h200.txt (five grid schedules at
// issue 27's points of S 16384 and 32768 on the H200, three rounds; tests/model recompute them):
// the pair's time over its twin's, median 0.986 at head dim 128 (0.985-0.987, with the causal mask
// and without), 1.000 at 64 (0.997-1.003), where the twins stay tied. A later H200 measurement
// contradicts it with the causal mask: the lagged m80 pairs took 1.004-1.013x their twins' time
// (rotation-2026-11-28/pairs-h200.txt), so --model-top measures each top pair's twin too
// (tuner/model_ranking.hpp, add_single_cta_twins) rather than trust this share there.
inline constexpr double kCtaPairsRateShare = 1 / 0.986;
inline constexpr double kCtaPairsNarrowHeadRateShare = 1.0;  // head dim 64
// A third Q/dO stage made room for by adding dQ from the consumers' registers
// (AttentionBackwardConfig::dq_from_registers, enumerated with the causal mask at head dim 64)
// against the two-stage twin whose dQ writer adds it, from
// bench/results/attention-backward-ws-h200/dq-from-registers-2026-11-28 (three D64 causal shapes
// on the H200; tests/model recompute it): time 0.990 of the twin's, the median.
inline constexpr double kDeeperRingByRegistersDqRateShare = 1 / 0.990;

// The share of the best variant's rate a config runs at (the product of the above).
double backward_rate_share(const AttentionBackwardConfig& config, const AttentionProblem& shape);

struct BackwardPrediction {
  AttentionBackwardConfig config;
  std::string config_key;
  bool runnable = true;  // false: the variant does not fit the GPU; `note` says why
  std::int64_t requested_sectors = 0;
  std::int64_t compulsory_misses = 0;
  std::int64_t misses = 0;
  double hit_rate = 0;
  std::int64_t dram_bytes_read = 0;
  std::int64_t dram_bytes_written = 0;
  double predicted_seconds = 0;
  double predicted_tflops = 0;
  std::string bound;  // "memory" or "compute"
  int wave_size = 0;
  std::string note;

  nlohmann::json to_json() const;
};

// The replay of one variant (`wave_size` 0: the profile's SMs x the resource model's CTAs per SM).
// Throws UsageError for an invalid problem, and a config that does not fit the GPU comes back with
// runnable = false.
BackwardPrediction predict_backward_variant(const AttentionBackwardProblem& problem,
                                            const GpuProfile& gpu,
                                            const AttentionBackwardConfig& config,
                                            int wave_size = 0);

// Every variant in the order given, on `threads` threads (0: hardware threads).
std::vector<BackwardPrediction> predict_backward_space(
    const AttentionBackwardProblem& problem, const GpuProfile& gpu,
    const std::vector<AttentionBackwardConfig>& configs, int threads = 0);

// The table `swr-tune model` and the compile-only tune print: variants by predicted time.
std::string format_backward_predictions(const AttentionBackwardProblem& problem,
                                        const GpuProfile& gpu,
                                        std::vector<BackwardPrediction> predictions,
                                        std::size_t rows = 20);

}  // namespace swr::model
