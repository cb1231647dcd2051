// Where a TunedCatalog's answers come from: a results database or an export directory. The
// catalog asks for the exact shape first, then for the shapes that could stand in for it, and
// picks the nearest itself (swr/shape_distance.hpp), so both sources answer alike. Each family
// (attention, GEMM) has its own three questions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "swr/shape_distance.hpp"
#include "swr/tuned_catalog.hpp"

namespace swr {

// A tuned shape that shares what is compiled into a kernel with the one asked for.
template <class Problem>
struct Candidate {
  Problem problem;
  GpuScale scale;  // of the GPU it was tuned on
  // What the source needs to fetch its best kernel (row ids, an index): opaque to the catalog.
  std::int64_t gpu_handle = 0;
  std::int64_t shape_handle = 0;
};

using CandidateShape = Candidate<AttentionProblem>;
using GemmCandidateShape = Candidate<GemmProblem>;

// Implementations guard their own state: the catalog calls them from any thread.
class CatalogSource {
 public:
  virtual ~CatalogSource() = default;

  virtual std::string description() const = 0;
  virtual bool is_export() const = 0;
  virtual std::vector<std::string> gpu_names() const = 0;

  // The best kernel of exactly `problem` on the GPUs named `gpu` (the fastest when several GPUs
  // of that name tuned it), or null.
  virtual std::shared_ptr<const TunedKernel> exact(const std::string& gpu,
                                                   const AttentionProblem& problem) const = 0;
  // Tuned shapes on GPUs named `gpu` with the head dim, dtype and causal mode of `like`.
  virtual std::vector<CandidateShape> candidates(const std::string& gpu,
                                                 const AttentionProblem& like) const = 0;
  virtual std::shared_ptr<const TunedKernel> best(const CandidateShape& candidate) const = 0;

  // The same for the GEMM family; candidates share the dtype of `like`.
  virtual std::shared_ptr<const TunedGemmKernel> exact(const std::string& gpu,
                                                       const GemmProblem& problem) const = 0;
  virtual std::vector<GemmCandidateShape> candidates(const std::string& gpu,
                                                     const GemmProblem& like) const = 0;
  virtual std::shared_ptr<const TunedGemmKernel> best(
      const GemmCandidateShape& candidate) const = 0;

  // The cubin an export holds for a kernel this source handed out; null for a database.
  virtual std::shared_ptr<const std::vector<char>> exported_cubin(
      const TunedKernelBase& kernel) const {
    (void)kernel;
    return nullptr;
  }
};

std::unique_ptr<CatalogSource> open_database_source(const std::filesystem::path& path);
std::unique_ptr<CatalogSource> open_export_source(const std::filesystem::path& directory);

}  // namespace swr
