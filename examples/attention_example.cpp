// Runs the tuned attention kernel from a program that sees only swr's public headers: open a
// results database or an export, ask for the best kernel for a shape, launch it on random data,
// and check the answer against a small reference computed here.
//
//   swr_attention_example --export kernels-h200/ --seq 1024 --head-dim 64
//   swr_attention_example --db results.db --gpu h200 --seq 4096   (lookup only without a GPU)
//
// Exit code 0 when the answer matches (or, without a GPU, once the lookup is printed), 1 when it
// does not or something fails, 2 for bad arguments.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "example_main.hpp"
#include "lookup_report.hpp"
#include "swr/attention.hpp"
#include "swr/device_buffer.hpp"
#include "swr/sixteen_bit.hpp"
#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"

namespace {

using swr_example::nvrtc_loaded;
using swr_example::print_choice;

constexpr const char* kUsage =
    "(--db PATH --gpu NAME | --export DIR) [shape] [--require-gpu]\n"
    "Looks up the best tuned attention kernel for a shape in a results database or an export,\n"
    "launches it on random data and checks the answer (without a GPU: the lookup only).\n"
    "  --db PATH         results database (with --gpu: the GPU whose results to use)\n"
    "  --export DIR      an export (swr-tune export)\n"
    "  --batch N --heads N --seq N --seq-kv N --head-dim N --dtype f16|bf16 --causal\n"
    "                    the shape (default: batch 2, heads 4, seq 1024, head dim 64, f16)\n"
    "  --require-gpu     exit 1 when there is no GPU to launch on\n"
    "Exit code: 0 the answer matches (or the lookup was printed), 1 a failure, 2 bad arguments.\n";

struct Arguments {
  std::string catalog;
  std::string gpu;
  swr::AttentionProblem problem{2, 4, 1024, 1024, 64, swr::DataType::f16, false};
  bool seq_kv_given = false;
  bool require_gpu = false;
};

int to_int(const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 1 || value > (1L << 30)) {
    throw swr::UsageError(std::string("bad number '") + text + "'");
  }
  return static_cast<int>(value);
}

Arguments parse(int argc, char** argv) {
  Arguments arguments;
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) throw swr::UsageError("missing value after " + option);
      return argv[++i];
    };
    if (option == "--db" || option == "--export") {
      arguments.catalog = value();
    } else if (option == "--gpu") {
      arguments.gpu = value();
    } else if (option == "--batch") {
      arguments.problem.batch = to_int(value());
    } else if (option == "--heads") {
      arguments.problem.heads = to_int(value());
    } else if (option == "--seq") {
      arguments.problem.seq_q = to_int(value());
    } else if (option == "--seq-kv") {
      arguments.problem.seq_kv = to_int(value());
      arguments.seq_kv_given = true;
    } else if (option == "--head-dim") {
      arguments.problem.head_dim = to_int(value());
    } else if (option == "--dtype") {
      const std::string dtype = value();
      if (dtype != "f16" && dtype != "bf16") throw swr::UsageError("bad --dtype '" + dtype + "'");
      arguments.problem.dtype = dtype == "f16" ? swr::DataType::f16 : swr::DataType::bf16;
    } else if (option == "--causal") {
      arguments.problem.causal = true;
    } else if (option == "--require-gpu") {
      arguments.require_gpu = true;
    } else {
      throw swr::UsageError("unknown option '" + option + "'");
    }
  }
  if (arguments.catalog.empty()) throw swr::UsageError("missing --db PATH or --export DIR");
  if (!arguments.seq_kv_given) arguments.problem.seq_kv = arguments.problem.seq_q;
  arguments.problem.validate();
  return arguments;
}

// One output row of attention in double precision.
void reference_row(const swr::AttentionProblem& p, const std::vector<float>& q,
                   const std::vector<float>& k, const std::vector<float>& v, std::int64_t head,
                   int row, std::vector<double>& out) {
  const int d = p.head_dim;
  const int columns = p.causal ? std::min(row + 1, p.seq_kv) : p.seq_kv;
  const float* q_row = &q[(head * p.seq_q + row) * d];
  std::vector<double> scores(static_cast<std::size_t>(columns));
  double top = -INFINITY;
  for (int j = 0; j < columns; ++j) {
    const float* k_row = &k[(head * p.seq_kv + j) * d];
    double dot = 0;
    for (int c = 0; c < d; ++c) dot += static_cast<double>(q_row[c]) * k_row[c];
    scores[j] = dot / std::sqrt(static_cast<double>(d));
    top = std::max(top, scores[j]);
  }
  double total = 0;
  for (double& score : scores) total += (score = std::exp(score - top));
  out.assign(static_cast<std::size_t>(d), 0.0);
  for (int j = 0; j < columns; ++j) {
    const float* v_row = &v[(head * p.seq_kv + j) * d];
    for (int c = 0; c < d; ++c) out[c] += scores[j] / total * v_row[c];
  }
}

int run(const Arguments& arguments) {
  const swr::AttentionProblem& p = arguments.problem;
  const swr::TunedCatalog catalog = swr::TunedCatalog::open(arguments.catalog);
  std::printf("catalog: %s\nproblem: %s\n", catalog.description().c_str(), p.key().c_str());

  std::string why;
  if (!swr::cuda_device_present(&why)) {
    if (!arguments.gpu.empty()) print_choice(catalog.best(arguments.gpu, p));
    std::printf("launch: skipped, %s\n", why.c_str());
    return arguments.require_gpu ? 1 : 0;
  }
  swr::AttentionOptions options;
  options.gpu = arguments.gpu;
  const swr::Attention attention(catalog, options);
  const swr::AttentionPlan plan = attention.plan(p);
  print_choice(plan.choice);
  std::printf("device: %s\ncubin: %s (%s), grid %d x %d threads, %d bytes shared\n",
              plan.device.c_str(), plan.cubin_origin.c_str(), plan.arch.c_str(), plan.grid,
              plan.block_threads, plan.dynamic_shared_bytes);

  auto encode = [&](float x) { return swr::float_to_element(p.dtype, x); };
  auto decode = [&](std::uint16_t x) { return swr::element_to_float(p.dtype, x); };
  const std::int64_t heads = static_cast<std::int64_t>(p.batch) * p.heads;
  const std::size_t q_count = static_cast<std::size_t>(heads) * p.seq_q * p.head_dim;
  const std::size_t kv_count = static_cast<std::size_t>(heads) * p.seq_kv * p.head_dim;
  std::mt19937 random(std::random_device{}());
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<std::uint16_t> q(q_count), k(kv_count), v(kv_count), o(q_count, 0xffff);  // o: NaN
  std::vector<float> qf(q_count), kf(kv_count), vf(kv_count);  // the rounded inputs, as floats
  for (std::size_t i = 0; i < q_count; ++i) qf[i] = decode(q[i] = encode(uniform(random)));
  for (std::size_t i = 0; i < kv_count; ++i) kf[i] = decode(k[i] = encode(uniform(random)));
  for (std::size_t i = 0; i < kv_count; ++i) vf[i] = decode(v[i] = encode(uniform(random)));

  swr::DeviceBuffer dq(q_count * 2), dk(kv_count * 2), dv(kv_count * 2), dout(q_count * 2);
  dq.copy_from_host(q.data(), q_count * 2);
  dk.copy_from_host(k.data(), kv_count * 2);
  dv.copy_from_host(v.data(), kv_count * 2);
  dout.copy_from_host(o.data(), q_count * 2);  // poisoned: an unwritten element stays NaN
  attention.run(p, {dq.pointer(), dk.pointer(), dv.pointer(), dout.pointer()});
  swr::synchronize();
  dout.copy_to_host(o.data(), q_count * 2);

  // Every row of small problems, 512 random rows of large ones.
  const std::int64_t rows = heads * p.seq_q;
  const std::int64_t checked = std::min<std::int64_t>(rows, 512);
  std::uniform_int_distribution<std::int64_t> pick(0, rows - 1);
  double error = 0, norm = 0;
  std::int64_t non_finite = 0;
  std::vector<double> expected;
  for (std::int64_t n = 0; n < checked; ++n) {
    const std::int64_t index = checked == rows ? n : pick(random);
    reference_row(p, qf, kf, vf, index / p.seq_q, static_cast<int>(index % p.seq_q), expected);
    for (int c = 0; c < p.head_dim; ++c) {
      const float got = decode(o[static_cast<std::size_t>(index) * p.head_dim + c]);
      if (!std::isfinite(got)) ++non_finite;
      error += (got - expected[c]) * (got - expected[c]);
      norm += expected[c] * expected[c];
    }
  }
  const double relative = std::sqrt(error / norm);
  const double tolerance = p.dtype == swr::DataType::f16 ? 2e-3 : 1e-2;
  const bool pass = non_finite == 0 && relative < tolerance;
  std::printf("check: %lld rows, relative error %.2e (bound %.0e), %lld non-finite: %s\n",
              static_cast<long long>(checked), relative, tolerance,
              static_cast<long long>(non_finite), pass ? "PASS" : "FAIL");
  std::printf("nvrtc loaded: %s\n", nvrtc_loaded() ? "yes" : "no");
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return swr_example::example_main("swr_attention_example", kUsage, argc, argv, parse, run);
}
