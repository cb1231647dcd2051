// How far a tuned shape is from a wanted one, for the nearest-shape lookup of TunedCatalog (the
// GEMM family's distance is at the end). Attention: a kernel's head dim, dtype and causal mode are
// compiled in, so only shapes that share them can stand in for each other; nor does a shape stand
// in for one of another GQA ratio (query heads per K/V head: how often each K/V byte is re-read)
// or another effective causal alignment (which keys each tile reads). Among those, what
// decides which variant wins is not the raw sequence length but two ratios:
//   - the K/V working set over the L2 the shapes share: once the K/V that one wave of CTAs re-reads
//     stops fitting, the KV order (cyclic vs sawtooth), the persistence and the head swizzle that
//     win change (a kernel tuned where K/V fits is the wrong answer where it does not);
//   - the Q tiles over the SM count: how many waves the grid makes, which decides between one CTA
//     per tile and persistent CTAs, and how much a tail wave costs.
// The distance is
//   |log2 l2_fraction(a) - log2 l2_fraction(b)| + |log2 waves(a) - log2 waves(b)|
//     + kL2CrossingPenalty when exactly one of the two fits in L2,
// so it is 0 for shapes that behave alike, grows by 1 per factor of two on either axis, and puts
// any shape on the same side of the L2 size ahead of one 16x closer on the other side.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "swr/attention_problem.hpp"
#include "swr/export.h"
#include "swr/gemm_problem.hpp"

namespace swr {

// What the distance needs to know about the GPU a shape was tuned on.
struct GpuScale {
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  // Data that every SM reads fits in l2_bytes / l2_partitions (2 on H100 and H200, whose L2
  // halves each keep their own copy).
  int l2_partitions = 1;
};

// The scale of a GPU as a results database or an export records it (name, SMs, L2 bytes); the L2
// partitions come from the built-in profile of that name (1 for a GPU without one).
SWR_API GpuScale gpu_scale(std::string_view gpu_name, int sm_count, std::int64_t l2_bytes);

// Rows of the nominal Q tile the features count with: the distance compares shapes, not variants,
// so it cannot use a variant's own tile height.
inline constexpr int kDistanceTileRows = 128;
// What crossing the L2 size costs, in factors of two (4: as far as 16x on one axis).
inline constexpr double kL2CrossingPenalty = 4.0;

struct ShapeFeatures {
  // Q tiles of kDistanceTileRows rows over all (batch, head) pairs.
  double q_tiles = 0;
  // The (batch, head) pairs one wave of sm_count consecutive tiles spans, and the K and V bytes of
  // their K/V heads: what the CTAs of a wave re-read while it runs.
  double heads_per_wave = 0;
  double kv_working_set_bytes = 0;
  double l2_fraction = 0;  // kv_working_set_bytes / (l2_bytes / l2_partitions)
  double waves = 0;        // q_tiles / sm_count
  bool fits_l2 = false;    // l2_fraction <= 1
};

// Throws std::invalid_argument for a GPU scale without SMs or L2.
SWR_API ShapeFeatures shape_features(const AttentionProblem& problem, const GpuScale& gpu);

// nullopt when `tuned` cannot serve `wanted` (head dim, dtype, causal mode, GQA ratio or effective
// causal alignment differ); otherwise the distance above, measured on the GPU the shape was tuned
// on.
SWR_API std::optional<double> shape_distance(const AttentionProblem& wanted,
                                             const AttentionProblem& tuned, const GpuScale& gpu);

// How far a tuned GEMM shape is from a wanted one. Every GEMM variant runs every valid shape (m,
// n and k are launch arguments; tails are zero-filled), and only the dtype is compiled in, so any
// tuned shape of the same dtype can stand in. What makes a variant win is the size of each axis
// relative to its tile (how many tiles, how deep the k loop), so the distance is the Euclidean
// distance of (log2 m, log2 n, log2 k): 1 for a factor of two on one axis, sqrt(3) for twice the
// size on all three. nullopt when the dtypes differ.
SWR_API std::optional<double> shape_distance(const GemmProblem& wanted, const GemmProblem& tuned);

}  // namespace swr
