// The worker client against a fake worker process that crashes, exits, hangs, loses its context
// or talks nonsense on command: each costs only its own variant (recorded with the error text),
// and the next variant is measured by a fresh worker.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "driver/cuda_driver.hpp"
#include "fake_worker_orders.hpp"
#include "run_swr_tune.hpp"
#include "tuner/tuning/worker_client.hpp"

namespace swr {
namespace {

using testing::FakeWorkerOrder;
using testing::seed_for;

VariantJob job_with(FakeWorkerOrder order) {
  VariantJob job;
  job.problem = {1, 2, 256, 256, 64, DataType::f16, false};
  job.config.block_m = 64;
  job.config.warps = 4;
  job.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\xff'};
  job.dynamic_shared_bytes = 40960;
  job.gpu = *find_gpu_profile("h200");
  job.seed = seed_for(order);
  return job;
}

WorkerTimeouts short_timeouts() {
  WorkerTimeouts timeouts;
  timeouts.startup = std::chrono::seconds(20);
  timeouts.minimum_variant_seconds = 1.0;
  timeouts.expected_time_multiple = 0;  // the minimum rules: a hang costs one second
  return timeouts;
}

WorkerClient fake_client(const std::vector<std::string>& extra = {},
                         const InterruptFlag* interrupt = nullptr) {
  std::vector<std::string> command = {FAKE_MEASURE_WORKER_PATH};
  command.insert(command.end(), extra.begin(), extra.end());
  return WorkerClient(command, short_timeouts(), interrupt);
}

void expect_measured(const VariantOutcome& outcome) {
  EXPECT_EQ(outcome.status, db::MeasurementStatus::ok) << outcome.error;
  EXPECT_EQ(outcome.times_ms, (std::vector<double>{1.5, 1.25, 1.75}));
  ASSERT_TRUE(outcome.counters.l2_sector_misses_from_tex.has_value());
  EXPECT_EQ(*outcome.counters.l2_sector_misses_from_tex, 1.0e6);
  EXPECT_EQ(outcome.counters.dram_source, "dram__bytes");
  EXPECT_EQ(outcome.registers, 128);
  EXPECT_FALSE(outcome.dropped);
}

TEST(WorkerClient, MeasuresThroughTheWorkerAndKeepsItForTheNextVariant) {
  WorkerClient client = fake_client();
  const VariantJob job = job_with(FakeWorkerOrder::measure);
  const VariantOutcome first = client.measure(job);
  expect_measured(first);
  // The worker decoded the request: the config came through the pipe.
  EXPECT_EQ(first.method.at("config_key"), job.config.key());
  // The request's round trip as the tuner saw it, beside the worker's own phases.
  EXPECT_GE(first.method.at("host_ms").at("round_trip").get<double>(), 0.0);
  expect_measured(client.measure(job));
  EXPECT_EQ(client.workers_started(), 1);
  EXPECT_EQ(client.device_name(), "Fake GPU");
}

// A plan of both families ends the attention worker before the GEMM one starts on the device
// (tuner/tuning_job.cpp), so that the GEMM worker can take the profiler: stop_worker ends it, and
// the client starts a fresh one at its next variant.
TEST(WorkerClient, StopWorkerEndsItAndTheNextVariantStartsAnother) {
  WorkerClient client = fake_client();
  client.stop_worker();  // none running yet: nothing to do
  EXPECT_EQ(client.workers_started(), 0);
  expect_measured(client.measure(job_with(FakeWorkerOrder::measure)));
  client.stop_worker();
  client.stop_worker();
  expect_measured(client.measure(job_with(FakeWorkerOrder::measure)));
  EXPECT_EQ(client.workers_started(), 2);
}

TEST(WorkerClient, CrashIsAFaultWithTheSignalAndTheLastStderrThenAFreshWorker) {
  WorkerClient client = fake_client();
  expect_measured(client.measure(job_with(FakeWorkerOrder::measure)));
  const VariantOutcome crashed = client.measure(job_with(FakeWorkerOrder::crash));
  EXPECT_EQ(crashed.status, db::MeasurementStatus::fault);
  EXPECT_NE(crashed.error.find("killed by signal 11"), std::string::npos) << crashed.error;
  EXPECT_NE(crashed.error.find("fake worker: about to crash on m64n64w4s2"), std::string::npos)
      << crashed.error;
  expect_measured(client.measure(job_with(FakeWorkerOrder::measure)));
  EXPECT_EQ(client.workers_started(), 2);
}

TEST(WorkerClient, ExitWithoutAReplyIsAFaultWithTheExitCode) {
  WorkerClient client = fake_client();
  const VariantOutcome ended = client.measure(job_with(FakeWorkerOrder::exit));
  EXPECT_EQ(ended.status, db::MeasurementStatus::fault);
  EXPECT_NE(ended.error.find("exited with code 7"), std::string::npos) << ended.error;
  EXPECT_NE(ended.error.find("fake worker: giving up"), std::string::npos) << ended.error;
  expect_measured(client.measure(job_with(FakeWorkerOrder::measure)));
  EXPECT_EQ(client.workers_started(), 2);
}

TEST(WorkerClient, HangIsATimeoutTheWorkerIsKilledAndTheNextVariantMeasured) {
  WorkerClient client = fake_client();
  const auto start = std::chrono::steady_clock::now();
  const VariantOutcome hung = client.measure(job_with(FakeWorkerOrder::hang));
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(hung.status, db::MeasurementStatus::timeout);
  EXPECT_NE(hung.error.find("no result within 1 s"), std::string::npos) << hung.error;
  EXPECT_NE(hung.error.find("killed by signal 9"), std::string::npos) << hung.error;
  EXPECT_GE(waited, 0.9);
  EXPECT_LT(waited, 10.0);
  expect_measured(client.measure(job_with(FakeWorkerOrder::measure)));
  EXPECT_EQ(client.workers_started(), 2);
}

TEST(WorkerClient, LostContextIsTheWorkersFaultReportAndANewWorkerFollows) {
  WorkerClient client = fake_client();
  const VariantOutcome lost = client.measure(job_with(FakeWorkerOrder::lose_context));
  EXPECT_EQ(lost.status, db::MeasurementStatus::fault);
  EXPECT_NE(lost.error.find("illegal memory access"), std::string::npos) << lost.error;
  expect_measured(client.measure(job_with(FakeWorkerOrder::measure)));
  EXPECT_EQ(client.workers_started(), 2);
}

TEST(WorkerClient, UnreadableReplyIsAFault) {
  WorkerClient client = fake_client();
  const VariantOutcome garbled = client.measure(job_with(FakeWorkerOrder::garbage));
  EXPECT_EQ(garbled.status, db::MeasurementStatus::fault);
  EXPECT_NE(garbled.error.find("unreadable reply"), std::string::npos) << garbled.error;
  expect_measured(client.measure(job_with(FakeWorkerOrder::measure)));
}

TEST(WorkerClient, SecondInterruptDropsTheVariantInFlight) {
  InterruptFlag interrupt;
  WorkerClient client = fake_client({}, &interrupt);
  std::thread user([&interrupt] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    interrupt.raise();  // the first Ctrl-C lets the variant finish...
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    interrupt.raise();  // ...the second abandons it
  });
  const VariantOutcome dropped = client.measure(job_with(FakeWorkerOrder::hang));
  user.join();
  EXPECT_TRUE(dropped.dropped);
}

TEST(WorkerClient, StartupErrorThrowsWithTheWorkersReason) {
  WorkerClient client = fake_client({"--fail-startup"});
  try {
    client.measure(job_with(FakeWorkerOrder::measure));
    FAIL() << "a worker that cannot start must throw";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("could not start: no CUDA driver/device found"),
              std::string::npos)
        << error.what();
  }
}

TEST(WorkerClient, WorkerDyingAtStartupThrowsWithItsExitAndStderr) {
  WorkerClient client = fake_client({"--die-at-startup"});
  try {
    client.measure(job_with(FakeWorkerOrder::measure));
    FAIL() << "a worker that cannot start must throw";
  } catch (const std::runtime_error& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("exited with code 5"), std::string::npos) << what;
    EXPECT_NE(what.find("no device today"), std::string::npos) << what;
  }
}

TEST(WorkerClient, MissingWorkerProgramThrows) {
  WorkerClient client({"/nonexistent/swr-worker"}, short_timeouts());
  EXPECT_THROW(client.measure(job_with(FakeWorkerOrder::measure)), std::runtime_error);
}

// The real worker (swr-tune __measure-worker) says why it cannot measure on a machine without a
// device, and the client turns that into an error for the whole run.
TEST(WorkerClient, RealWorkerWithoutADeviceSaysSo) {
  if (CudaDriver::try_get() != nullptr) GTEST_SKIP() << "a CUDA driver is present";
  WorkerClient client({test::swr_tune_path(), kMeasureWorkerSubcommand}, short_timeouts());
  try {
    client.measure(job_with(FakeWorkerOrder::measure));
    FAIL() << "no device: the worker cannot start";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("no CUDA driver/device found"), std::string::npos)
        << error.what();
  }
}

TEST(WorkerTimeout, GrowsWithTheProblemAndHasAFloor) {
  const GpuProfile h200 = *find_gpu_profile("h200");
  const WorkerTimeouts defaults;
  const AttentionProblem small{1, 1, 1024, 1024, 64, DataType::f16, false};
  const AttentionProblem large{8, 1, 131072, 131072, 128, DataType::f16, false};
  EXPECT_NEAR(variant_timeout_seconds(small, h200, defaults), 40.0, 0.1);  // 20 x ~2 s
  EXPECT_GT(variant_timeout_seconds(large, h200, defaults), 60.0);
  EXPECT_LT(variant_timeout_seconds(large, h200, defaults), 1000.0);
}

// A batch is one request: each variant its own outcome, the counters of all in one session.
TEST(WorkerClientBatch, ABatchIsOneRequestToOneWorker) {
  WorkerClient client = fake_client();
  const std::vector<VariantOutcome> outcomes =
      client.measure_batch({job_with(FakeWorkerOrder::measure), job_with(FakeWorkerOrder::measure),
                            job_with(FakeWorkerOrder::measure)});
  ASSERT_EQ(outcomes.size(), 3u);
  for (const VariantOutcome& outcome : outcomes) {
    expect_measured(outcome);
    EXPECT_GE(outcome.method.at("host_ms").at("round_trip_batch").get<double>(), 0.0);
  }
  EXPECT_EQ(client.workers_started(), 1);
}

// A variant that crashes the worker while measured costs only itself: the others run again in a
// fresh worker, without it.
TEST(WorkerClientBatch, AVariantThatCrashesTheWorkerCostsOnlyItself) {
  WorkerClient client = fake_client();
  const std::vector<VariantOutcome> outcomes =
      client.measure_batch({job_with(FakeWorkerOrder::measure), job_with(FakeWorkerOrder::crash),
                            job_with(FakeWorkerOrder::measure)});
  ASSERT_EQ(outcomes.size(), 3u);
  expect_measured(outcomes[0]);
  EXPECT_EQ(outcomes[1].status, db::MeasurementStatus::fault);
  EXPECT_NE(outcomes[1].error.find("died while measuring"), std::string::npos) << outcomes[1].error;
  EXPECT_NE(outcomes[1].error.find("about to crash on variant 1"), std::string::npos)
      << outcomes[1].error;
  expect_measured(outcomes[2]);
  EXPECT_EQ(client.workers_started(), 2);
}

TEST(WorkerClientBatch, ALostContextEndsTheBatchAndTheOthersRunAgain) {
  WorkerClient client = fake_client();
  const std::vector<VariantOutcome> outcomes = client.measure_batch(
      {job_with(FakeWorkerOrder::measure), job_with(FakeWorkerOrder::lose_context),
       job_with(FakeWorkerOrder::measure)});
  expect_measured(outcomes[0]);
  EXPECT_EQ(outcomes[1].status, db::MeasurementStatus::fault);
  EXPECT_NE(outcomes[1].error.find("illegal memory access"), std::string::npos);
  expect_measured(outcomes[2]);
  EXPECT_EQ(client.workers_started(), 2);
}

// A death while the batch is counted names no variant: the batch runs again one profiling session
// each, where the death names it, and the rest runs once more without it.
TEST(WorkerClientBatch, ADeathWhileCountingIsNarrowedDownOneSessionEach) {
  WorkerClient client = fake_client();
  const std::vector<VariantOutcome> outcomes = client.measure_batch(
      {job_with(FakeWorkerOrder::measure), job_with(FakeWorkerOrder::crash_counting),
       job_with(FakeWorkerOrder::measure)});
  expect_measured(outcomes[0]);
  EXPECT_EQ(outcomes[1].status, db::MeasurementStatus::fault);
  EXPECT_NE(outcomes[1].error.find("about to crash on variant 1"), std::string::npos)
      << outcomes[1].error;
  expect_measured(outcomes[2]);
  EXPECT_EQ(client.workers_started(), 3);
}

TEST(WorkerClientBatch, AHangIsATimeoutOfItsVariantOnly) {
  WorkerClient client = fake_client();
  const std::vector<VariantOutcome> outcomes =
      client.measure_batch({job_with(FakeWorkerOrder::hang), job_with(FakeWorkerOrder::measure)});
  EXPECT_EQ(outcomes[0].status, db::MeasurementStatus::timeout);
  expect_measured(outcomes[1]);
}

}  // namespace
}  // namespace swr
