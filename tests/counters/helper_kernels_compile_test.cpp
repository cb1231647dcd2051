// The tuner's helper kernels compile with NVRTC for every target GPU, without spills.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "generator/nvrtc_compiler.hpp"
#include "tuner/attention_reference_kernel.hpp"
#include "tuner/device_random_fill.hpp"
#include "tuner/l2_flush.hpp"
#include "tuner/power_load.hpp"

namespace swr {
namespace {

struct HelperSource {
  const char* name;
  const char* (*text)();
  std::vector<std::string> entries;
};

class HelperKernelsCompile : public testing::TestWithParam<const char*> {};

TEST_P(HelperKernelsCompile, ForTheArchWithoutSpills) {
  const NvrtcCompiler compiler;
  const HelperSource sources[] = {
      {"flush", l2_flush_kernel_source, {"swr_l2_flush", "swr_l2_read"}},
      {"fill", random_fill_kernel_source, {"swr_fill_uniform"}},
      {"power load", power_load_kernel_source, {"swr_power_load"}},
      {"reference",
       attention_reference_kernel_source,
       {"swr_reference_rows", "swr_gather_rows", "swr_count_non_finite"}},
  };
  for (const HelperSource& source : sources) {
    KernelSource kernel;
    kernel.name = std::string(source.name) + ".cu";
    kernel.entry = source.entries.front();
    kernel.text = source.text();
    const CompiledKernel compiled = compiler.compile(kernel, GetParam());
    ASSERT_TRUE(compiled.ok) << source.name << " for " << GetParam() << ":\n" << compiled.log;
    for (const std::string& entry : source.entries) {
      ASSERT_NE(compiled.log.find("Compiling entry function '" + entry + "'"), std::string::npos)
          << entry << " missing from the ptxas report:\n"
          << compiled.log;
      const PtxasResources resources = parse_ptxas_resources(compiled.log, entry);
      EXPECT_EQ(resources.spill_bytes, 0) << entry << ":\n" << compiled.log;
      EXPECT_GT(resources.registers, 0) << entry;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, HelperKernelsCompile,
                         testing::Values("sm_90", "sm_90a", "sm_100", "sm_121"));

}  // namespace
}  // namespace swr
