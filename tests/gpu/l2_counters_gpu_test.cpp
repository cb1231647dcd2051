// L2 counters from the in-process CUPTI session on simple read kernels whose traffic is known:
// a read of N bytes asks L2 for N/32 sectors; after the flush they all miss; read twice in one
// pass without a flush between, the second read hits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "driver/device_context.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tuner/counters/counter_batches.hpp"
#include "tuner/counters/helper_kernel_module.hpp"
#include "tuner/counters/l2_counter_session.hpp"
#include "tuner/l2_flush.hpp"

namespace swr {
namespace {

constexpr std::int64_t kMiB = 1 << 20;
constexpr double kSectorBytes = 32;

struct DeviceBuffer {
  const CudaDriver& driver;
  CUdeviceptr pointer = 0;
  DeviceBuffer(const CudaDriver& d, std::size_t bytes) : driver(d) {
    SWR_CU(driver, cuMemAlloc(&pointer, bytes));
    SWR_CU(driver, cuMemsetD8Async(pointer, 0, bytes, nullptr));
    SWR_CU(driver, cuStreamSynchronize(nullptr));
  }
  ~DeviceBuffer() { driver.cuMemFree(pointer); }
};

class L2CountersOnGpu : public testing::Test {
 protected:
  void SetUp() override {
    SWR_REQUIRE_GPU();
    context_ = std::make_unique<DeviceContext>();
    flush_ = std::make_unique<L2Flush>(*context_);
    session_ = std::make_unique<L2CounterSession>(context_.get(), flush_.get());
    if (!session_->available()) {
      // Counter permissions are the machine's setting, not a defect of the code.
      if (session_->unavailable_reason().find("PRIVILEGES") != std::string::npos) {
        GTEST_SKIP() << session_->unavailable_reason();
      }
      FAIL() << session_->unavailable_reason();
    }
    module_ = std::make_unique<HelperKernelModule>(CudaDriver::get(), context_->device(),
                                                   "swr_l2_read", l2_flush_kernel_source());
    read_ = module_->function("swr_l2_read");
    sink_ = std::make_unique<DeviceBuffer>(CudaDriver::get(), 16);
  }

  void read(const DeviceBuffer& buffer, std::int64_t bytes, CUstream stream) const {
    const void* data = reinterpret_cast<const void*>(buffer.pointer);
    const unsigned long long words = bytes / 16;
    void* sink = reinterpret_cast<void*>(sink_->pointer);
    module_->launch(read_, 132 * 8, 256, stream, data, words, sink);
  }

  void print(const char* what, const L2Counters& counters) const {
    std::cout << what << ": ranges";
    for (const std::string& name : session_->last_range_names()) std::cout << " [" << name << "]";
    std::cout << " measured #" << session_->last_range_index() << "; tex sectors "
              << counters.l2_sectors_from_tex.value_or(-1) << ", misses "
              << counters.l2_sector_misses_from_tex.value_or(-1) << ", hit rate "
              << counters.l2_hit_rate_percent.value_or(-1) << " %, DRAM read "
              << counters.dram_bytes_read.value_or(-1) << " B, written "
              << counters.dram_bytes_written.value_or(-1) << " B\n";
  }

  std::unique_ptr<DeviceContext> context_;
  std::unique_ptr<L2Flush> flush_;
  std::unique_ptr<L2CounterSession> session_;
  std::unique_ptr<HelperKernelModule> module_;
  CUfunction read_ = nullptr;
  std::unique_ptr<DeviceBuffer> sink_;
};

TEST_F(L2CountersOnGpu, SessionDescribesItsSetup) {
  std::cout << "chip " << session_->chip() << ", metric set " << session_->metric_set_name() << ", "
            << session_->passes() << " passes; flush " << flush_->buffer_bytes()
            << " B for an L2 of " << flush_->l2_bytes() << " B\n";
  EXPECT_FALSE(session_->chip().empty());
  EXPECT_GE(session_->passes(), 1u);
  EXPECT_GE(flush_->buffer_bytes(), 2 * flush_->l2_bytes());
  if (session_->chip() == "GH100") {
    EXPECT_EQ(session_->metric_set_name(), "dram_bytes");
    EXPECT_EQ(session_->passes(), 3u);
  }
}

// A read of N bytes asks L2 for N/32 sectors, at every size, and after the flush they miss.
TEST_F(L2CountersOnGpu, ReadOfNBytesRequestsNOver32SectorsAndMissesAfterTheFlush) {
  for (std::int64_t bytes : {4 * kMiB, 16 * kMiB, 256 * kMiB}) {
    DeviceBuffer buffer(CudaDriver::get(), bytes);
    const L2Counters counters =
        session_->measure(nullptr, [&](CUstream stream) { read(buffer, bytes, stream); });
    print(("read " + std::to_string(bytes / kMiB) + " MiB").c_str(), counters);
    ASSERT_TRUE(counters.l2_sectors_from_tex && counters.l2_sector_misses_from_tex);
    const double sectors = bytes / kSectorBytes;
    EXPECT_GE(*counters.l2_sectors_from_tex, 0.99 * sectors) << bytes;
    EXPECT_LE(*counters.l2_sectors_from_tex, 1.10 * sectors) << bytes;
    EXPECT_GE(*counters.l2_sector_misses_from_tex, 0.95 * sectors) << bytes;
    if (counters.l2_hit_rate_percent) EXPECT_LT(*counters.l2_hit_rate_percent, 20) << bytes;
    if (counters.dram_bytes_read) {
      EXPECT_GE(*counters.dram_bytes_read, 0.95 * bytes) << bytes;
      EXPECT_LE(*counters.dram_bytes_read, 1.20 * bytes) << bytes;
    }
  }
}

// The same 16 MiB read twice in one pass: without a flush between, the second read hits (the
// buffer fits in L2); with the flush between (as timing runs do), it misses again.
TEST_F(L2CountersOnGpu, FlushMakesAReReadMiss) {
  const std::int64_t bytes = 16 * kMiB;
  DeviceBuffer buffer(CudaDriver::get(), bytes);
  const double sectors = bytes / kSectorBytes;

  const L2Counters warm = session_->measure(nullptr, [&](CUstream stream) {
    read(buffer, bytes, stream);
    read(buffer, bytes, stream);
  });
  print("re-read without flush", warm);
  ASSERT_EQ(session_->last_range_names().size(), 3u);
  EXPECT_EQ(session_->last_range_index(), 2u);
  ASSERT_TRUE(warm.l2_sector_misses_from_tex && warm.l2_sectors_from_tex);
  EXPECT_GE(*warm.l2_sectors_from_tex, 0.99 * sectors);
  EXPECT_LT(*warm.l2_sector_misses_from_tex, 0.10 * sectors);

  const L2Counters cold = session_->measure(nullptr, [&](CUstream stream) {
    read(buffer, bytes, stream);
    flush_->launch(stream);
    read(buffer, bytes, stream);
  });
  print("re-read after flush", cold);
  ASSERT_EQ(session_->last_range_names().size(), 4u);
  EXPECT_EQ(session_->last_range_index(), 3u);
  ASSERT_TRUE(cold.l2_sector_misses_from_tex);
  EXPECT_GE(*cold.l2_sector_misses_from_tex, 0.95 * sectors);
}

TEST_F(L2CountersOnGpu, AFailingLaunchPropagatesAndTheSessionGoesOn) {
  const std::int64_t bytes = 4 * kMiB;
  DeviceBuffer buffer(CudaDriver::get(), bytes);
  EXPECT_THROW(session_->measure(nullptr,
                                 [&](CUstream stream) {
                                   read(buffer, bytes, stream);
                                   throw std::runtime_error("launch failed");
                                 }),
               std::runtime_error);
  EXPECT_THROW(session_->measure(nullptr, [](CUstream) {}), std::runtime_error)
      << "a launch that runs no kernel measures nothing";
  EXPECT_TRUE(session_->available()) << session_->unavailable_reason();
  const L2Counters counters =
      session_->measure(nullptr, [&](CUstream stream) { read(buffer, bytes, stream); });
  ASSERT_TRUE(counters.l2_sectors_from_tex);
  EXPECT_GE(*counters.l2_sectors_from_tex, 0.99 * bytes / kSectorBytes);
}

TEST_F(L2CountersOnGpu, TwoSessionsInTurnShareTheProfiler) {
  session_.reset();
  const std::int64_t bytes = 4 * kMiB;
  DeviceBuffer buffer(CudaDriver::get(), bytes);
  L2CounterSession again(context_.get(), flush_.get());
  ASSERT_TRUE(again.available()) << again.unavailable_reason();
  const L2Counters counters =
      again.measure(nullptr, [&](CUstream stream) { read(buffer, bytes, stream); });
  ASSERT_TRUE(counters.l2_sectors_from_tex);
  EXPECT_GE(*counters.l2_sectors_from_tex, 0.99 * bytes / kSectorBytes);
}

// Issue 29: one profiling session for many launches gives each launch the counters a session of
// its own gives it (within 1%), in the right order: reads of five sizes as five "variants".
TEST_F(L2CountersOnGpu, BatchedSessionEqualsOneSessionPerLaunchWithinOnePercent) {
  const std::vector<std::int64_t> sizes = {4 * kMiB, 8 * kMiB, 16 * kMiB, 32 * kMiB, 64 * kMiB};
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  std::vector<BatchLaunch> launches;
  for (std::int64_t bytes : sizes) {
    buffers.push_back(std::make_unique<DeviceBuffer>(CudaDriver::get(), bytes));
    const DeviceBuffer* buffer = buffers.back().get();
    launches.push_back(
        {[this, buffer, bytes](CUstream stream) { read(*buffer, bytes, stream); }, "swr_l2_read"});
  }
  std::vector<L2Counters> alone;
  for (const BatchLaunch& launch : launches) {
    alone.push_back(session_->measure(nullptr, launch.launch, launch.kernel_name));
  }
  const std::vector<L2Counters> batched = session_->measure_batch(nullptr, launches);
  ASSERT_EQ(batched.size(), launches.size());
  const auto within_one_percent = [](std::optional<double> a, std::optional<double> b) {
    return a && b && std::abs(*a - *b) <= 0.01 * std::max(std::abs(*a), std::abs(*b)) + 64;
  };
  for (std::size_t i = 0; i < launches.size(); ++i) {
    print(("alone   " + std::to_string(sizes[i] / kMiB) + " MiB").c_str(), alone[i]);
    print(("batched " + std::to_string(sizes[i] / kMiB) + " MiB").c_str(), batched[i]);
    EXPECT_TRUE(within_one_percent(alone[i].l2_sectors_from_tex, batched[i].l2_sectors_from_tex))
        << i;
    EXPECT_TRUE(within_one_percent(alone[i].l2_sector_misses_from_tex,
                                   batched[i].l2_sector_misses_from_tex))
        << i;
    if (alone[i].dram_bytes_read) {
      EXPECT_TRUE(within_one_percent(alone[i].dram_bytes_read, batched[i].dram_bytes_read)) << i;
    }
    // Its own read, not a neighbour's: N/32 sectors.
    ASSERT_TRUE(batched[i].l2_sectors_from_tex);
    EXPECT_GE(*batched[i].l2_sectors_from_tex, 0.99 * sizes[i] / kSectorBytes) << i;
    EXPECT_LE(*batched[i].l2_sectors_from_tex, 1.10 * sizes[i] / kSectorBytes) << i;
  }
}

// Through the batching rule with the real profiler: a launch that throws loses its counters, the
// batch runs again without it and the others keep theirs; the session stays usable.
TEST_F(L2CountersOnGpu, ALaunchFailingInABatchCostsOnlyItsOwnCounters) {
  DeviceBuffer buffer(CudaDriver::get(), 16 * kMiB);
  const BatchLaunch good{[&](CUstream stream) { read(buffer, 16 * kMiB, stream); }, "swr_l2_read"};
  const BatchLaunch bad{[](CUstream) { throw std::runtime_error("planted launch failure"); },
                        "swr_l2_read"};
  CuptiBatchProfiler profiler(*session_);
  const BatchedCounters counted = collect_counters_in_batches(profiler, nullptr, {good, bad, good});
  EXPECT_EQ(counted.sessions, 2u);
  EXPECT_TRUE(counted.counters[1].empty());
  EXPECT_EQ(counted.failed[1], "planted launch failure");
  for (std::size_t i : {0u, 2u}) {
    ASSERT_TRUE(counted.counters[i].l2_sectors_from_tex) << i;
    EXPECT_GE(*counted.counters[i].l2_sectors_from_tex, 0.99 * 16 * kMiB / kSectorBytes) << i;
  }
  EXPECT_TRUE(session_->available());
}

}  // namespace
}  // namespace swr
