#include "generator/parallel_compiler.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <thread>

#include "representative_variants.hpp"
#include "temporary_directory.hpp"

namespace swr {
namespace {

using testing::representative_variants;
using testing::TemporaryDirectory;

const NvrtcCompiler& compiler() {
  static const NvrtcCompiler instance;
  return instance;
}

std::vector<CompileJob> jobs_for(const std::vector<int>& variants,
                                 const std::vector<std::string>& archs) {
  const std::vector<testing::Variant> all = representative_variants();
  std::vector<CompileJob> jobs;
  for (const std::string& arch : archs) {
    for (int index : variants) {
      const testing::Variant& variant = all.at(static_cast<std::size_t>(index));
      jobs.push_back({variant.problem, variant.config, arch});
    }
  }
  return jobs;
}

std::string job_name(const CompileJob& job) {
  return job.arch + "/" + job.config.key() + "/" + job.problem.key();
}

TEST(ParallelCompiler, CompilesEveryJobOnceAndHandsResultsToTheCallingThread) {
  TemporaryDirectory temp;
  const CubinCache cache(temp.path() / "cubins");
  const std::vector<CompileJob> jobs = jobs_for({0, 2}, {"sm_90a", "sm_121"});
  const std::thread::id caller = std::this_thread::get_id();

  std::map<std::string, std::vector<char>> cubins;
  compile_in_parallel(compiler(), &cache, jobs, 2, [&](const CompileResult& result) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    EXPECT_TRUE(result.kernel.ok) << result.kernel.log;
    EXPECT_FALSE(result.kernel.from_cache);
    EXPECT_EQ(result.kernel.cache_key.size(), 64u);
    EXPECT_EQ(result.kernel.arch, result.job.arch);
    EXPECT_EQ(result.source.entry, kAttentionEntryName);
    EXPECT_TRUE(cubins.emplace(job_name(result.job), result.kernel.cubin).second);
  });
  EXPECT_EQ(cubins.size(), jobs.size());

  // Second run, as after a restart: everything comes from the disk cache, byte for byte.
  const CubinCache reopened(temp.path() / "cubins");
  std::size_t hits = 0;
  compile_in_parallel(compiler(), &reopened, jobs, 0, [&](const CompileResult& result) {
    EXPECT_TRUE(result.kernel.from_cache);
    EXPECT_TRUE(result.kernel.ok);
    EXPECT_EQ(result.kernel.cubin, cubins.at(job_name(result.job)));
    ++hits;
  });
  EXPECT_EQ(hits, jobs.size());
}

// Cache entries planted under the jobs' real keys: no NVRTC work at all, so this also proves
// the lookup happens before compiling.
CubinCache planted_cache(const std::filesystem::path& dir, const std::vector<CompileJob>& jobs) {
  CubinCache cache(dir);
  for (const CompileJob& job : jobs) {
    const KernelSource source = render_attention_kernel(job.problem, job.config);
    const std::string key = CubinCache::key_for(source, compiler().options_for(job.arch),
                                                compiler().version(), job.arch);
    CompiledKernel kernel;
    kernel.arch = job.arch;
    kernel.entry = source.entry;
    kernel.cubin = {'p', 'l', 'a', 'n', 't', 'e', 'd'};
    kernel.ok = true;
    kernel.registers = 99;
    cache.store(key, kernel);
  }
  return cache;
}

TEST(ParallelCompiler, UsesTheCacheBeforeCompiling) {
  TemporaryDirectory temp;
  const std::vector<CompileJob> jobs = jobs_for({0, 1, 2, 3, 4, 5}, {"sm_90a", "sm_121"});
  const CubinCache cache = planted_cache(temp.path(), jobs);
  std::size_t results = 0;
  compile_in_parallel(compiler(), &cache, jobs, 3, [&](const CompileResult& result) {
    EXPECT_TRUE(result.kernel.from_cache);
    EXPECT_EQ(result.kernel.registers, 99);
    EXPECT_EQ(std::string(result.kernel.cubin.begin(), result.kernel.cubin.end()), "planted");
    ++results;
  });
  EXPECT_EQ(results, jobs.size());
}

TEST(ParallelCompiler, ACallbackErrorStopsTheRunAndPropagates) {
  TemporaryDirectory temp;
  const std::vector<CompileJob> jobs = jobs_for({0, 1, 2, 3, 4, 5}, {"sm_90a", "sm_121"});
  const CubinCache cache = planted_cache(temp.path(), jobs);
  std::size_t calls = 0;
  EXPECT_THROW(compile_in_parallel(compiler(), &cache, jobs, 2,
                                   [&](const CompileResult&) {
                                     ++calls;
                                     throw std::logic_error("measurement failed");
                                   }),
               std::logic_error);
  EXPECT_EQ(calls, 1u);
}

TEST(ParallelCompiler, AFailedVariantIsReportedAndNotCached) {
  TemporaryDirectory temp;
  const CubinCache cache(temp.path());
  const std::vector<CompileJob> jobs = jobs_for({0}, {"sm_1"});  // NVRTC rejects the arch
  std::size_t failures = 0;
  compile_in_parallel(compiler(), &cache, jobs, 1, [&](const CompileResult& result) {
    EXPECT_FALSE(result.kernel.ok);
    EXPECT_FALSE(result.kernel.log.empty());
    EXPECT_FALSE(cache.load(result.kernel.cache_key).has_value());
    ++failures;
  });
  EXPECT_EQ(failures, 1u);
}

TEST(ParallelCompiler, NoJobsIsANoOp) {
  compile_in_parallel(compiler(), nullptr, {}, 4,
                      [](const CompileResult&) { ADD_FAILURE() << "called"; });
}

}  // namespace
}  // namespace swr
