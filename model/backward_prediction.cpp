#include "model/backward_prediction.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "generator/attention_backward/attention_backward_family.hpp"
#include "model/cache_models.hpp"
#include "model/schedule_replay.hpp"
#include "support/parallel_for.hpp"
#include "swr/usage_error.hpp"
#include "templates/attention/backward/backward_schedule.cuh"

namespace swr::model {
namespace {

// The tensors a backward step touches, each numbered per (batch, head) and tile.
enum class Tensor { q, d_o, lists, dq, k, v };

// Dense tile numbers and sector weights of one problem's tiles, for the tile LRU.
class BackwardTiles {
 public:
  BackwardTiles(const AttentionBackwardProblem& problem, const AttentionBackwardConfig& config,
                int sector_bytes)
      : shape_(problem.shape), block_m_(config.block_m), block_n_(config.block_n) {
    const std::int64_t element = static_cast<std::int64_t>(element_bytes(shape_.dtype));
    q_tiles_ = (shape_.seq_q + block_m_ - 1) / block_m_;
    kv_tiles_ = (shape_.seq_kv + block_n_ - 1) / block_n_;
    heads_ = shape_.batch * shape_.heads;
    kv_heads_ = shape_.batch * shape_.kv_head_count();
    row_sectors_[static_cast<int>(Tensor::q)] = shape_.head_dim * element / sector_bytes;
    row_sectors_[static_cast<int>(Tensor::d_o)] = row_sectors_[static_cast<int>(Tensor::q)];
    row_sectors_[static_cast<int>(Tensor::dq)] = shape_.head_dim * 4 / sector_bytes;
    row_sectors_[static_cast<int>(Tensor::k)] = row_sectors_[static_cast<int>(Tensor::q)];
    row_sectors_[static_cast<int>(Tensor::v)] = row_sectors_[static_cast<int>(Tensor::q)];
    const std::int64_t query_tiles = static_cast<std::int64_t>(heads_) * q_tiles_;
    const std::int64_t key_tiles = static_cast<std::int64_t>(kv_heads_) * kv_tiles_;
    // Q, dO, lists, dQ, then K, V.
    for (int t = 0; t < 4; ++t) first_[t] = t * query_tiles;
    first_[static_cast<int>(Tensor::k)] = 4 * query_tiles;
    first_[static_cast<int>(Tensor::v)] = 4 * query_tiles + key_tiles;
    count_ = 4 * query_tiles + 2 * key_tiles;
    sector_bytes_ = sector_bytes;
  }

  std::int64_t count() const { return count_; }
  int q_tiles() const { return q_tiles_; }
  int kv_tiles() const { return kv_tiles_; }
  std::int32_t number(Tensor tensor, int head, int tile) const {
    const bool key = tensor == Tensor::k || tensor == Tensor::v;
    return static_cast<std::int32_t>(
        first_[static_cast<int>(tensor)] +
        static_cast<std::int64_t>(head) * (key ? kv_tiles_ : q_tiles_) + tile);
  }
  // Sectors of the tile's rows inside the sequence.
  std::int32_t sectors(Tensor tensor, int tile) const {
    const bool key = tensor == Tensor::k || tensor == Tensor::v;
    const int block = key ? block_n_ : block_m_;
    const int seq = key ? shape_.seq_kv : shape_.seq_q;
    const int rows = std::min(block, seq - tile * block);
    if (tensor == Tensor::lists) {
      return static_cast<std::int32_t>(
          (2 * static_cast<std::int64_t>(block_m_) * 4 + sector_bytes_ - 1) / sector_bytes_);
    }
    return static_cast<std::int32_t>(rows * row_sectors_[static_cast<int>(tensor)]);
  }

 private:
  AttentionProblem shape_;
  int block_m_, block_n_;
  int q_tiles_ = 0, kv_tiles_ = 0, heads_ = 0, kv_heads_ = 0;
  std::int64_t row_sectors_[6] = {};
  std::int64_t first_[6] = {};
  std::int64_t count_ = 0;
  int sector_bytes_ = 32;
};

// One CTA slot: the tile it owns and where its walk is.
struct Slot {
  bool running = false;
  bool finished = false;
  int batch = 0;
  int kv_head = 0;  // within the batch
  int kv_tile = 0;
  bool reads_shared_tiles = true;  // Q and dO (false: a CTA pair's second member)
  int steps = 0;
  int step = 0;
  // The walk as the warp-specialized producer counts it (a split part's range of positions).
  int first_q_tile = 0;
  int position = 0;
  int stride = 1;
  attention::BackwardStep at{};
};

struct Totals {
  std::int64_t requested = 0;
  std::int64_t misses = 0;
  std::int64_t compulsory = 0;
};

}  // namespace

nlohmann::json BackwardPrediction::to_json() const {
  return {{"config_key", config_key},
          {"runnable", runnable},
          {"requested_sectors", requested_sectors},
          {"compulsory_misses", compulsory_misses},
          {"misses", misses},
          {"hit_rate", hit_rate},
          {"dram_bytes_read", dram_bytes_read},
          {"dram_bytes_written", dram_bytes_written},
          {"predicted_ms", predicted_seconds * 1e3},
          {"predicted_tflops", predicted_tflops},
          {"bound", bound},
          {"wave_size", wave_size},
          {"note", note}};
}

BackwardPrediction predict_backward_variant(const AttentionBackwardProblem& problem,
                                            const GpuProfile& gpu,
                                            const AttentionBackwardConfig& config, int wave_size) {
  problem.validate();
  BackwardPrediction prediction;
  prediction.config = config;
  prediction.config_key = config.key();
  const ResourceUse use = attention_backward_resource_use(problem, config, gpu);
  if (!use.does_not_fit.empty()) {
    prediction.runnable = false;
    prediction.note = use.does_not_fit;
    return prediction;
  }
  if (wave_size <= 0) wave_size = gpu.sm_count * use.blocks_per_sm;
  prediction.wave_size = wave_size;

  const AttentionProblem& shape = problem.shape;
  const BackwardTiles tiles(problem, config, gpu.l2_sector_bytes);
  const int kv_heads = shape.kv_head_count();
  const int group_heads = shape.heads / kv_heads;
  const int batch_kv_heads = shape.batch * kv_heads;
  const int unit_ctas = config.cluster_ctas();
  // The last wave's units as the kernel splits them (one part a scheduled unit).
  const attention::BackwardLastWave split = backward_last_wave(problem, config, wave_size);
  const std::int64_t units = static_cast<std::int64_t>(attention::backward_scheduled_units(
                                 split, backward_schedule_units(problem, config))) *
                             unit_ctas;
  TileDispenser dispenser(config.persistence, units, wave_size);
  // The whole L2 as one LRU, not one per partition each keeping its own copy of what both sides
  // read (the forward's replay): the backward's measured counters follow the single cache, at GQA
  // and not, on the H100 and the H200 (bench/results/attention-backward-ws-h200/l2-replay-*;
  // tests/model/backward_prediction_test.cpp checks it against them).
  TileLruCache cache(gpu.l2_bytes / gpu.l2_sector_bytes, static_cast<std::int32_t>(tiles.count()));
  std::vector<bool> ever_read(static_cast<std::size_t>(tiles.count()), false);
  Totals totals;
  const auto access = [&](Tensor tensor, int head, int tile) {
    const std::int32_t number = tiles.number(tensor, head, tile);
    const std::int32_t weight = tiles.sectors(tensor, tile);
    totals.requested += weight;
    if (!cache.access(number, weight)) totals.misses += weight;
    if (!ever_read[number]) {
      ever_read[number] = true;
      totals.compulsory += weight;
    }
  };

  std::vector<Slot> slots(dispenser.slot_count());
  const auto start = [&](int s) {
    Slot& slot = slots[s];
    const std::optional<TileAssignment> assignment = dispenser.next(s);
    if (!assignment) {
      slot.running = false;
      slot.finished = true;
      return;
    }
    const int linear = static_cast<int>(assignment->linear_tile);
    const attention::BackwardUnitPart part =
        attention::backward_unit_part(split, linear / unit_ctas);
    const attention::BackwardTileUnit unit = attention::backward_tile_unit(
        schedule_swizzle(config.swizzle),
        config.swizzle == TileSwizzle::head_groups ? config.head_group : 1,
        part.unit * unit_ctas + linear % unit_ctas, tiles.kv_tiles(), batch_kv_heads, unit_ctas);
    slot.batch = unit.batch_head / kv_heads;
    slot.kv_head = unit.batch_head - slot.batch * kv_heads;
    slot.kv_tile = unit.kv_tile;
    // A pair's second CTA reads the Q and dO its first multicasts, not the L2.
    slot.reads_shared_tiles = unit.kv_tile == unit.first_kv_tile;
    const int first =
        attention::first_q_tile_of_kv_tile(shape.causal, unit.first_kv_tile, config.block_m,
                                           config.block_n, shape.seq_q, shape.causal_shift());
    const attention::BackwardPartSteps steps =
        attention::backward_part_steps(split, part.part, group_heads * (tiles.q_tiles() - first));
    slot.steps = steps.count;
    slot.step = 0;
    // A pair walks in its first tile's round (the kernel's rule; pairs take a grid's tiles).
    const int round = config.cta_pairs
                          ? attention::backward_unit_round(linear, wave_size, unit_ctas)
                          : assignment->round;
    const attention::BackwardPositions positions =
        attention::backward_positions(schedule_order(config.order), steps.count, round);
    slot.first_q_tile = first;
    slot.position = steps.first + positions.first;
    slot.stride = positions.stride;
    if (slot.steps > 0) {
      slot.at = attention::backward_step_of_index(slot.position, first, tiles.q_tiles());
    }
    slot.running = true;
    const int kv_index = slot.batch * kv_heads + slot.kv_head;
    if (slot.kv_tile < tiles.kv_tiles()) {  // a pair's member past the last tile reads zeros
      access(Tensor::k, kv_index, slot.kv_tile);
      access(Tensor::v, kv_index, slot.kv_tile);
    }
  };
  for (int s = 0; s < static_cast<int>(slots.size()); ++s) start(s);

  // Lock-step: every running CTA takes one step a tick, the wave's reads of each tensor together.
  const Tensor kStepTensors[] = {Tensor::q, Tensor::d_o, Tensor::lists, Tensor::dq};
  bool any = true;
  while (any) {
    any = false;
    for (Tensor tensor : kStepTensors) {
      for (int s = 0; s < static_cast<int>(slots.size()); ++s) {
        const Slot& slot = slots[s];
        if (!slot.running || slot.step >= slot.steps) continue;
        if ((tensor == Tensor::q || tensor == Tensor::d_o) && !slot.reads_shared_tiles) continue;
        const int head =
            slot.batch * shape.heads + slot.kv_head * group_heads + slot.at.head_in_group;
        access(tensor, head, slot.at.q_tile);
        if (tensor == Tensor::dq) access(tensor, head, slot.at.q_tile);  // the write
      }
    }
    for (int s = 0; s < static_cast<int>(slots.size()); ++s) {
      Slot& slot = slots[s];
      if (!slot.running) continue;
      if (slot.step < slot.steps) {
        if (++slot.step < slot.steps) {
          slot.position += slot.stride;
          slot.at =
              attention::backward_step_of_index(slot.position, slot.first_q_tile, tiles.q_tiles());
        }
      }
      if (slot.step >= slot.steps) start(s);  // its dK and dV are written; the next tile
      any = any || slot.running;
    }
  }

  const std::int64_t sector = gpu.l2_sector_bytes;
  prediction.requested_sectors = totals.requested;
  prediction.misses = totals.misses;
  prediction.compulsory_misses = totals.compulsory;
  prediction.hit_rate =
      totals.requested > 0 ? 1.0 - static_cast<double>(totals.misses) / totals.requested : 0;
  prediction.dram_bytes_read = totals.misses * sector;
  // dK and dV once, and the fp32 dQ accumulator written back once.
  const std::int64_t element = static_cast<std::int64_t>(element_bytes(shape.dtype));
  prediction.dram_bytes_written =
      2 * static_cast<std::int64_t>(shape.batch) * kv_heads * shape.seq_kv * shape.head_dim *
          element +
      static_cast<std::int64_t>(shape.batch) * shape.heads * shape.seq_q * shape.head_dim * 4;
  const double path_fraction = config.warp_specialized() ? kWarpSpecializedBackwardPeakFraction
                               : config.path == InstructionPath::wgmma
                                   ? kWgmmaBackwardPeakFraction
                                   : kMmaSyncBackwardPeakFraction;
  const double rate = gpu.peak_tensor_flops * path_fraction * backward_rate_share(config, shape);
  const double compute = rate > 0 ? problem.flops() / rate : 0;
  const double memory =
      gpu.dram_bytes_per_second > 0
          ? (prediction.dram_bytes_read + prediction.dram_bytes_written) / gpu.dram_bytes_per_second
          : 0;
  prediction.predicted_seconds = std::max(compute, memory);
  prediction.bound = memory > compute ? "memory" : "compute";
  prediction.predicted_tflops =
      prediction.predicted_seconds > 0 ? problem.flops() / prediction.predicted_seconds / 1e12 : 0;
  prediction.note =
      "tile LRU of the whole L2, lock-step wave of " + std::to_string(wave_size) +
      " CTAs; time: the instruction path's measured share of the tensor peak, "
      "times its tile's, dQ mode's, consumer sync's, CTA pairs' and dQ route's measured shares";
  return prediction;
}

double backward_rate_share(const AttentionBackwardConfig& config, const AttentionProblem& shape) {
  const bool causal = shape.causal;
  double share = 1;
  if (config.block_n < 128) share *= kNarrowTileRateShare;
  if (config.dq == DqAccumulation::deterministic) {
    share *= causal ? kDeterministicCausalRateShare : kDeterministicRateShare;
  }
  if (config.consumers == ConsumerSync::lagged) {
    share *= causal ? kLaggedCausalRateShare : kLaggedRateShare;
  }
  if (config.cta_pairs) {
    share *= shape.head_dim >= 128 ? kCtaPairsRateShare : kCtaPairsNarrowHeadRateShare;
  }
  if (config.dq_from_registers) share *= kDeeperRingByRegistersDqRateShare;
  return share;
}

std::vector<BackwardPrediction> predict_backward_space(
    const AttentionBackwardProblem& problem, const GpuProfile& gpu,
    const std::vector<AttentionBackwardConfig>& configs, int threads) {
  std::vector<BackwardPrediction> predictions(configs.size());
  parallel_for(configs.size(), threads, [&](std::size_t i) {
    predictions[i] = predict_backward_variant(problem, gpu, configs[i]);
  });
  return predictions;
}

std::string format_backward_predictions(const AttentionBackwardProblem& problem,
                                        const GpuProfile& gpu,
                                        std::vector<BackwardPrediction> predictions,
                                        std::size_t rows) {
  std::stable_sort(predictions.begin(), predictions.end(),
                   [](const BackwardPrediction& a, const BackwardPrediction& b) {
                     if (a.runnable != b.runnable) return a.runnable;
                     if (a.predicted_seconds != b.predicted_seconds) {
                       return a.predicted_seconds < b.predicted_seconds;
                     }
                     return a.misses < b.misses;
                   });
  std::ostringstream out;
  out << "model of " << problem.key() << " on " << gpu.name << " (" << gpu.arch
      << "): predicted L2 misses and time, fastest first\n";
  char line[256];
  std::snprintf(line, sizeof(line), "  %-48s %12s %12s %8s %10s %9s\n", "variant", "L2 misses",
                "compulsory", "hit", "ms", "TFLOP/s");
  out << line;
  std::size_t shown = 0;
  for (const BackwardPrediction& p : predictions) {
    if (shown++ == rows) break;
    if (!p.runnable) {
      out << "  " << p.config_key << ": does not fit (" << p.note << ")\n";
      continue;
    }
    std::snprintf(line, sizeof(line), "  %-48s %12.3e %12.3e %7.1f%% %10.3f %9.1f\n",
                  p.config_key.c_str(), static_cast<double>(p.misses),
                  static_cast<double>(p.compulsory_misses), 100 * p.hit_rate,
                  p.predicted_seconds * 1e3, p.predicted_tflops);
    out << line;
  }
  if (!predictions.empty()) out << "  (" << predictions.front().note << ")\n";
  return out.str();
}

}  // namespace swr::model
