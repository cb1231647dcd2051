// The tuner's pure parts: timing statistics and the run-count rule, base64, the 16-bit element
// conversions, the worker protocol (attention and GEMM requests), the derived figures, the record a
// measured or failed variant becomes, the result tables, and the interrupt handler.
#include <gtest/gtest.h>
#include <signal.h>

#include <sstream>

#include "swr/sixteen_bit.hpp"
#include "tuner/power_load.hpp"
#include "tuner/tuning/interrupt_flag.hpp"
#include "tuner/tuning/result_table.hpp"
#include "tuner/tuning/timing_statistics.hpp"
#include "tuner/tuning/variant_record.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {
namespace {

TEST(TimingStatistics, MedianP95AndMinimum) {
  const TimingStatistics odd = summarize_timings({3.0, 1.0, 2.0});
  EXPECT_EQ(odd.median_ms, 2.0);
  EXPECT_EQ(odd.min_ms, 1.0);
  EXPECT_EQ(odd.p95_ms, 3.0);
  EXPECT_EQ(odd.runs, 3);
  EXPECT_EQ(summarize_timings({4.0, 1.0, 2.0, 3.0}).median_ms, 2.5);
  std::vector<double> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(i);
  EXPECT_EQ(summarize_timings(twenty).p95_ms, 19.0);  // nearest rank: ceil(0.95 * 20) = 19
  EXPECT_THROW(summarize_timings({}), std::invalid_argument);
}

TEST(TimingStatistics, RunCountAdaptsToTheKernelTime) {
  // At least 3 runs even for a kernel of seconds.
  EXPECT_TRUE(needs_another_timed_run(2, 5000));
  EXPECT_FALSE(needs_another_timed_run(3, 5000));
  // A fast kernel runs until 0.4 s has been timed, at most 20 times.
  EXPECT_TRUE(needs_another_timed_run(10, 10 * 0.05));
  EXPECT_FALSE(needs_another_timed_run(20, 20 * 0.05));
  EXPECT_FALSE(needs_another_timed_run(8, 400.5));
  const auto runs_of = [](double kernel_ms) {
    int runs = 0;
    double total = 0;
    while (needs_another_timed_run(runs, total)) {
      ++runs;
      total += kernel_ms;
    }
    return runs;
  };
  EXPECT_EQ(runs_of(150.0), 3);  // 450 ms after the minimum
  EXPECT_EQ(runs_of(30.0), 14);  // 420 ms
  EXPECT_EQ(runs_of(1.0), 20);   // capped
}

TEST(PowerLoad, IterationsFillTheTimeAsked) {
  EXPECT_EQ(power_load_iterations(500.0, 0.25), 2000u);
  EXPECT_EQ(power_load_iterations(17.3, 0.25), 70u);  // rounded up
  EXPECT_EQ(power_load_iterations(0.001, 0.25), 1u);  // at least one
  EXPECT_EQ(power_load_iterations(0.0, 0.25), 1u);    // a run too short to time
  EXPECT_EQ(power_load_iterations(500.0, 0.0), kMaximumPowerLoadIterations);  // misread clock
  EXPECT_EQ(power_load_iterations(1e300, 1e-9), kMaximumPowerLoadIterations);
}

TEST(Base64, RoundTripsEveryLengthAndByte) {
  for (std::size_t length = 0; length < 70; ++length) {
    std::vector<char> bytes(length);
    for (std::size_t i = 0; i < length; ++i) bytes[i] = static_cast<char>((i * 37 + 250) & 0xFF);
    EXPECT_EQ(decode_base64(encode_base64(bytes)), bytes) << length;
  }
  EXPECT_EQ(encode_base64({'M', 'a', 'n'}), "TWFu");
  EXPECT_EQ(encode_base64({'M', 'a'}), "TWE=");
  EXPECT_EQ(encode_base64({'M'}), "TQ==");
  EXPECT_THROW(decode_base64("TWF"), std::invalid_argument);
  EXPECT_THROW(decode_base64("TW!u"), std::invalid_argument);
  EXPECT_THROW(decode_base64("T=Fu"), std::invalid_argument);
}

TEST(Base64, RejectsPaddingThatIsNotAtTheEnd) {
  EXPECT_EQ(decode_base64(""), std::vector<char>{});
  EXPECT_EQ(decode_base64("TWE="), (std::vector<char>{'M', 'a'}));
  EXPECT_THROW(decode_base64("T==="), std::invalid_argument);
  EXPECT_THROW(decode_base64("TQ==TQ=="), std::invalid_argument);
  EXPECT_THROW(decode_base64("TW u"), std::invalid_argument);
}

// The host conversions round to nearest even: a value halfway between two 16-bit numbers goes to
// the one whose last bit is 0.
TEST(SixteenBitElements, RoundToNearestEven) {
  EXPECT_EQ(float_to_element(DataType::f16, 1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(float_to_element(DataType::f16, 1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(float_to_element(DataType::f16, 65519.0f), 0x7bff);
  EXPECT_EQ(float_to_element(DataType::f16, 65520.0f), 0x7c00);   // rounds up to infinity
  EXPECT_EQ(float_to_element(DataType::f16, -0x1p-24f), 0x8001);  // smallest subnormal
  EXPECT_EQ(float_to_element(DataType::bf16, 1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(float_to_element(DataType::bf16, 1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_EQ(element_to_float(DataType::f16, 0x3c01), 1.0f + 0x1p-10f);
  EXPECT_EQ(element_to_float(DataType::f16, 0x0001), 0x1p-24f);
  EXPECT_EQ(element_to_float(DataType::bf16, 0x4049), 3.140625f);
  for (std::uint16_t bits : {0x0000, 0x3555, 0xc123, 0x7bff}) {
    EXPECT_EQ(float_to_element(DataType::f16, element_to_float(DataType::f16, bits)), bits);
    EXPECT_EQ(float_to_element(DataType::bf16, element_to_float(DataType::bf16, bits)), bits);
  }
}

TEST(WorkerProtocol, RequestAndResultSurviveTheirJsonLines) {
  VariantJob job;
  job.problem = {2, 3, 1000, 1200, 128, DataType::bf16, true};
  job.config = *AttentionConfig::from_key("m128n64w8s2-sawtooth-static-groups4");
  job.config.planted_fault = true;
  job.cubin = {'\0', '\x01', '\xfe', '\xff', 'x'};
  job.dynamic_shared_bytes = 98304;
  job.gpu = *find_gpu_profile("h200");
  job.seed = 0xfedcba9876543210ull;
  const VariantJob back =
      job_from_measure_request(nlohmann::json::parse(measure_request(job).dump()));
  EXPECT_EQ(back.problem.key(), job.problem.key());
  EXPECT_EQ(back.config, job.config);
  EXPECT_EQ(back.cubin, job.cubin);
  EXPECT_EQ(back.dynamic_shared_bytes, job.dynamic_shared_bytes);
  EXPECT_EQ(back.gpu.sm_count, job.gpu.sm_count);
  EXPECT_EQ(back.seed, job.seed);

  WorkerReply reply;
  reply.outcome.status = db::MeasurementStatus::wrong_result;
  reply.outcome.error = "wrong result";
  reply.outcome.times_ms = {1.0, 2.0};
  reply.outcome.relative_error = 0.25;
  reply.outcome.non_finite = 7;
  reply.outcome.counters.l2_sector_misses_from_tex = 4.58e9;
  reply.outcome.counters.dram_source = "l2_fill_sectors";
  reply.outcome.counters_unavailable = "";
  reply.outcome.registers = 255;
  reply.outcome.method = {{"timer", "events"}};
  reply.context_lost = true;
  const WorkerReply read =
      reply_from_result_message(nlohmann::json::parse(result_message(reply).dump()));
  EXPECT_EQ(read.outcome.status, db::MeasurementStatus::wrong_result);
  EXPECT_EQ(read.outcome.error, "wrong result");
  EXPECT_EQ(read.outcome.times_ms, reply.outcome.times_ms);
  EXPECT_EQ(read.outcome.relative_error, 0.25);
  EXPECT_EQ(read.outcome.non_finite, 7);
  EXPECT_EQ(read.outcome.counters.l2_sector_misses_from_tex, 4.58e9);
  EXPECT_FALSE(read.outcome.counters.l2_hit_rate_percent.has_value());
  EXPECT_EQ(read.outcome.counters.dram_source, "l2_fill_sectors");
  EXPECT_EQ(read.outcome.registers, 255);
  EXPECT_FALSE(read.outcome.blocks_per_sm.has_value());
  EXPECT_EQ(read.outcome.method, reply.outcome.method);
  EXPECT_TRUE(read.context_lost);

  EXPECT_THROW(reply_from_result_message(ready_message("x")), std::invalid_argument);
  nlohmann::json bad_status = result_message(reply);
  bad_status["status"] = "fine";
  EXPECT_THROW(reply_from_result_message(bad_status), std::invalid_argument);
}

TEST(WorkerProtocol, GemmRequestsCarryTheSameKernelFields) {
  GemmVariantJob job;
  job.problem = {1024, 512, 256, DataType::bf16};
  job.config = *GemmConfig::from_key("m128n128k32w2x4s3-static-swzm512");
  job.cubin = {'\0', 'g', '\xff'};
  job.dynamic_shared_bytes = 49152;
  job.gpu = *find_gpu_profile("h100");
  job.seed = 42;
  const nlohmann::json request = nlohmann::json::parse(gemm_measure_request(job).dump());
  const GemmVariantJob back = gemm_job_from_measure_request(request);
  EXPECT_EQ(back.problem, job.problem);
  EXPECT_FALSE(back.cublas);
  EXPECT_EQ(back.config, job.config);
  EXPECT_EQ(back.cubin, job.cubin);
  EXPECT_EQ(back.dynamic_shared_bytes, job.dynamic_shared_bytes);
  EXPECT_EQ(back.gpu.name, job.gpu.name);
  EXPECT_EQ(back.gpu.sm_count, job.gpu.sm_count);
  EXPECT_EQ(back.gpu.l2_bytes, job.gpu.l2_bytes);
  EXPECT_EQ(back.seed, job.seed);

  // The fields an attention request carries too are spelled the same way.
  VariantJob attention;
  attention.problem = {1, 1, 128, 128, 64, DataType::f16, false};
  attention.gpu = job.gpu;
  const nlohmann::json attention_request = measure_request(attention);
  for (const char* field : {"cubin_base64", "dynamic_shared_bytes", "gpu", "seed"}) {
    EXPECT_TRUE(attention_request.contains(field)) << field;
    EXPECT_TRUE(request.contains(field)) << field;
  }
  EXPECT_EQ(attention_request.at("gpu"), request.at("gpu"));
  EXPECT_THROW(gemm_job_from_measure_request(attention_request), std::invalid_argument);

  job.cublas = true;
  const nlohmann::json cublas_request = gemm_measure_request(job);
  EXPECT_TRUE(cublas_request.at("config").is_null());
  EXPECT_TRUE(gemm_job_from_measure_request(cublas_request).cublas);
  nlohmann::json bad_dtype = request;
  bad_dtype["problem"]["dtype"] = "f64";
  EXPECT_THROW(gemm_job_from_measure_request(bad_dtype), std::invalid_argument);
}

TEST(DerivedFigures, FollowTheFlashAttentionConventionAndTheRoofline) {
  const GpuProfile h200 = *find_gpu_profile("h200");
  const AttentionProblem problem{8, 1, 131072, 131072, 128, DataType::f16, true};
  // Q, K, V, O of 8 heads x 131072 x 128 halves: 4 x 256 MiB.
  EXPECT_DOUBLE_EQ(compulsory_attention_bytes(problem), 4.0 * 8 * 131072 * 128 * 2);
  L2Counters counters;
  counters.dram_bytes_read = 109e9;
  counters.dram_bytes_written = 1e9;
  const DerivedFigures figures = derive_figures(problem_work(problem), h200, 100.0, counters);
  EXPECT_NEAR(*figures.tflops, problem.flops() / 0.1 / 1e12, 1e-6);
  EXPECT_NEAR(*figures.observed_intensity, problem.flops() / 110e9, 1e-6);
  EXPECT_NEAR(*figures.algorithmic_intensity, problem.flops() / compulsory_attention_bytes(problem),
              1e-6);
  const double roofline_seconds =
      std::max(problem.flops() / h200.peak_tensor_flops, 110e9 / h200.dram_bytes_per_second);
  EXPECT_NEAR(*figures.roofline_fraction, roofline_seconds / 0.1, 1e-12);

  const DerivedFigures untimed = derive_figures(problem_work(problem), h200, std::nullopt, {});
  EXPECT_FALSE(untimed.tflops.has_value());
  EXPECT_FALSE(untimed.observed_intensity.has_value());
  EXPECT_FALSE(untimed.roofline_fraction.has_value());
  EXPECT_TRUE(untimed.algorithmic_intensity.has_value());
}

CompileResult compiled_variant() {
  CompileResult compiled;
  compiled.job.problem = {1, 1, 1024, 1024, 64, DataType::f16, false};
  compiled.job.config = *AttentionConfig::from_key("m64n64w4s1-cyclic-grid-head_major");
  compiled.job.arch = "sm_90a";
  compiled.source.dynamic_shared_bytes = 24576;
  compiled.kernel.ok = true;
  compiled.kernel.registers = 100;
  compiled.kernel.spill_bytes = 8;
  compiled.kernel.cache_key = "abc123";
  return compiled;
}

TEST(VariantRecord, OkOutcomeWithoutTimesBecomesALaunchError) {
  const VariantRecordContext context{db::GpuId{1}, db::ProblemId{2}, db::ConfigId{3}, "13.0",
                                     "580.1"};
  VariantOutcome outcome;  // ok, but nothing timed
  const db::MeasurementRecord record =
      measured_variant_record(context, compiled_variant().job.problem, *find_gpu_profile("h200"),
                              compiled_variant(), outcome);
  EXPECT_EQ(record.status, db::MeasurementStatus::launch_error);
  EXPECT_FALSE(record.error.empty());
  EXPECT_EQ(record.registers, 100);  // the compiler's count when the worker gave none
  EXPECT_EQ(record.spill_bytes, 8);
  EXPECT_EQ(record.source_hash, "abc123");
}

TEST(VariantRecord, HitRateIsAFractionAndFailuresKeepTheirError) {
  const VariantRecordContext context{db::GpuId{1}, db::ProblemId{2}, db::ConfigId{3}, "13.0",
                                     "580.1"};
  VariantOutcome outcome;
  outcome.times_ms = {2.0, 1.0, 3.0};
  outcome.counters.l2_hit_rate_percent = 100.0000001;  // rounding above 100 stays a fraction
  const db::MeasurementRecord record =
      measured_variant_record(context, compiled_variant().job.problem, *find_gpu_profile("h200"),
                              compiled_variant(), outcome);
  EXPECT_EQ(record.status, db::MeasurementStatus::ok);
  EXPECT_EQ(record.l2_hit_rate, 1.0);
  EXPECT_EQ(record.median_ms, 2.0);
  EXPECT_EQ(record.timed_runs, 3);

  VariantOutcome fault;
  fault.status = db::MeasurementStatus::fault;
  fault.error = "worker killed by signal 11";
  const db::MeasurementRecord faulted =
      measured_variant_record(context, compiled_variant().job.problem, *find_gpu_profile("h200"),
                              compiled_variant(), fault);
  EXPECT_EQ(faulted.status, db::MeasurementStatus::fault);
  EXPECT_EQ(faulted.error, "worker killed by signal 11");
  EXPECT_FALSE(faulted.median_ms.has_value());

  CompileResult refused = compiled_variant();
  refused.kernel.ok = false;
  refused.kernel.log = std::string(kMaximumStoredLogBytes + 100, 'e');
  const db::MeasurementRecord compile_error = compile_failure_record(context, refused);
  EXPECT_EQ(compile_error.status, db::MeasurementStatus::compile_error);
  EXPECT_LT(compile_error.error.size(), kMaximumStoredLogBytes + 100);
  EXPECT_NE(compile_error.error.find("[log cut at"), std::string::npos);
  EXPECT_EQ(compile_error.method.at("arch"), "sm_90a");
}

db::StoredMeasurement stored(const std::string& key, double ms, double misses,
                             db::MeasurementStatus status = db::MeasurementStatus::ok) {
  db::StoredMeasurement measurement;
  measurement.config_key = key;
  measurement.record.status = status;
  if (status == db::MeasurementStatus::ok) {
    measurement.record.median_ms = ms;
    measurement.record.tflops = 100.0 / ms;
    measurement.record.l2_sector_misses = misses;
    measurement.record.l2_hit_rate = 0.5;
    measurement.record.dram_read_bytes = 2e9;
  } else {
    measurement.record.error = "illegal address\nmore detail";
  }
  return measurement;
}

TEST(ResultTable, NumbersAreCompact) {
  EXPECT_EQ(format_count(4.58e9), "4.58e9");
  EXPECT_EQ(format_count(812), "812");
  EXPECT_EQ(format_count(std::nullopt), "-");
  EXPECT_EQ(format_hit_rate(0.57), "57.0%");
  EXPECT_EQ(format_milliseconds(12.3456), "12.346");
  EXPECT_EQ(format_milliseconds(0.12345), "0.1235");
}

TEST(ResultTable, ComparesTheBestOfEachOrderAndTheWinnersTwin) {
  const std::vector<db::StoredMeasurement> measurements = {
      stored("m128n64w8s2-sawtooth-static-groups4", 10.0, 1e9),
      stored("m128n64w8s2-cyclic-grid-head_major", 11.0, 3e9),
      stored("m128n64w8s2-cyclic-static-groups4", 12.0, 4e9),
      stored("m64n64w4s1-cyclic-grid-head_major", 0, 0, db::MeasurementStatus::fault),
  };
  std::ostringstream out;
  print_top_variants(out, measurements, 2);
  const std::string top = out.str();
  EXPECT_NE(top.find("m128n64w8s2-sawtooth-static-groups4"), std::string::npos) << top;
  EXPECT_NE(top.find("m128n64w8s2-cyclic-grid-head_major"), std::string::npos) << top;
  EXPECT_EQ(top.find("m128n64w8s2-cyclic-static-groups4"), std::string::npos) << top;
  EXPECT_NE(top.find("1.00e9"), std::string::npos) << top;

  std::ostringstream comparison;
  print_order_comparison(comparison, measurements);
  const std::string text = comparison.str();
  // Best cyclic (11 ms, 3e9 misses) against best sawtooth (10 ms, 1e9).
  EXPECT_NE(text.find("sawtooth/cyclic: time 0.91x, L2 misses 0.33x"), std::string::npos) << text;
  // The winner's twin is the cyclic static groups4 variant (12 ms, 4e9).
  EXPECT_NE(text.find("winner vs its twin"), std::string::npos) << text;
  EXPECT_NE(text.find("cyclic/sawtooth: time 1.20x, L2 misses 4.00x"), std::string::npos) << text;

  std::ostringstream all;
  print_all_variants(all, measurements);
  const std::string listing = all.str();
  EXPECT_NE(listing.find("fault"), std::string::npos);
  EXPECT_NE(listing.find("illegal address"), std::string::npos);
  EXPECT_EQ(listing.find("more detail"), std::string::npos);  // first line of the error only
}

TEST(ResultTable, SaysWhenTheTwinIsMissing) {
  std::ostringstream out;
  print_order_comparison(out, {stored("m128n64w8s2-sawtooth-static-groups4", 10.0, 1e9)});
  const std::string text = out.str();
  EXPECT_NE(text.find("cyclic: no valid variant"), std::string::npos) << text;
  EXPECT_NE(text.find("m128n64w8s2-cyclic-static-groups4 not measured"), std::string::npos) << text;
}

// A row without L2 misses says why, never 0; its JSON form names its counter status and note.
TEST(ResultTable, MissingMissesSayWhy) {
  db::MeasurementRecord record;
  record.median_ms = 1.0;
  record.counter_status = db::CounterStatus::skipped_by_policy;
  EXPECT_EQ(format_misses(record), "- (skipped)");
  record.counter_status = db::CounterStatus::unavailable;
  EXPECT_EQ(format_misses(record), "- (unavailable)");
  record.counter_status = db::CounterStatus::failed;
  EXPECT_EQ(format_misses(record), "- (failed)");
  record.counter_status.reset();  // a row of an older file: derived, unavailable
  EXPECT_EQ(format_misses(record), "- (unavailable)");
  record.status = db::MeasurementStatus::wrong_result;
  EXPECT_EQ(format_misses(record), "-");  // not reached
  record.l2_sector_misses = 1.2e9;
  EXPECT_EQ(format_misses(record), "1.20e9");

  db::StoredMeasurement stored;
  stored.config_key = "k";
  stored.record.median_ms = 2.0;
  stored.record.counter_status = db::CounterStatus::skipped_by_policy;
  stored.record.counter_note = "--counters none: timing only";
  const nlohmann::json json = measurement_json(stored);
  EXPECT_EQ(json.at("counter_status"), "skipped_by_policy");
  EXPECT_EQ(json.at("counter_note"), "--counters none: timing only");
  EXPECT_TRUE(json.at("l2_sector_misses").is_null());
}

// Whether a row has counters and why not, from the outcome of its measurement.
TEST(VariantRecord, CounterStatusFollowsTheOutcome) {
  db::MeasurementRecord record;
  VariantOutcome outcome;
  set_counter_status(record, outcome);
  EXPECT_EQ(record.counter_status, db::CounterStatus::failed);
  outcome.counters_skipped = true;
  set_counter_status(record, outcome);
  EXPECT_EQ(record.counter_status, db::CounterStatus::skipped_by_policy);
  outcome.counters_skipped = false;
  outcome.counters_unavailable = "profiling unavailable: busy";
  set_counter_status(record, outcome);
  EXPECT_EQ(record.counter_status, db::CounterStatus::unavailable);
  EXPECT_EQ(record.counter_note, "profiling unavailable: busy");
  record.l2_sector_misses = 5.0;
  set_counter_status(record, outcome);
  EXPECT_EQ(record.counter_status, db::CounterStatus::collected);
  EXPECT_EQ(record.counter_note, "");
  record.l2_sector_misses.reset();
  record.status = db::MeasurementStatus::fault;
  set_counter_status(record, outcome);
  EXPECT_EQ(record.counter_status, db::CounterStatus::not_reached);
}

TEST(InterruptHandler, FirstSignalStopsSecondDrops) {
  InterruptFlag flag;
  {
    const ScopedInterruptHandler handler(flag);
    EXPECT_THROW(ScopedInterruptHandler{flag}, std::logic_error);  // one at a time
    raise(SIGINT);
    EXPECT_TRUE(flag.stop_requested());
    EXPECT_FALSE(flag.drop_requested());
    raise(SIGTERM);
    EXPECT_TRUE(flag.drop_requested());
  }
  // The previous disposition (the default) is back.
  struct sigaction current {};
  sigaction(SIGINT, nullptr, &current);
  EXPECT_EQ(current.sa_handler, SIG_DFL);
}

}  // namespace
}  // namespace swr
