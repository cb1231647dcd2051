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
#include <random>
#include <string>
#include <vector>

#include "example_main.hpp"
#include "example_run.hpp"
#include "swr/attention.hpp"
#include "swr/device_buffer.hpp"
#include "swr/tuned_catalog.hpp"

namespace {

using swr_example::nvrtc_loaded;
using swr_example::positive_int;
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
  swr_example::CommonArguments common;
  swr::AttentionProblem problem{2, 4, 1024, 1024, 64, swr::DataType::f16, false};
};

Arguments parse(int argc, char** argv) {
  Arguments arguments;
  swr::AttentionProblem& p = arguments.problem;
  bool seq_kv_given = false;
  swr_example::parse_arguments(argc, argv, arguments.common,
                               [&](const std::string& option, auto value) {
                                 if (option == "--batch") {
                                   p.batch = positive_int(option, value());
                                 } else if (option == "--heads") {
                                   p.heads = positive_int(option, value());
                                 } else if (option == "--seq") {
                                   p.seq_q = positive_int(option, value());
                                 } else if (option == "--seq-kv") {
                                   p.seq_kv = positive_int(option, value());
                                   seq_kv_given = true;
                                 } else if (option == "--head-dim") {
                                   p.head_dim = positive_int(option, value());
                                 } else if (option == "--causal") {
                                   p.causal = true;
                                 } else {
                                   return false;
                                 }
                                 return true;
                               });
  p.dtype = arguments.common.dtype;
  if (!seq_kv_given) p.seq_kv = p.seq_q;
  p.validate();
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
  const swr::TunedCatalog catalog = swr::TunedCatalog::open(arguments.common.catalog);
  if (const auto exit_code = lookup_only_without_device(catalog, arguments.common, p)) {
    return *exit_code;
  }
  swr::AttentionOptions options;
  options.gpu = arguments.common.gpu;
  const swr::Attention attention(catalog, options);
  const swr::AttentionPlan plan = attention.plan(p);
  print_choice(plan.choice);
  std::printf("device: %s\ncubin: %s (%s), grid %d x %d threads, %d bytes shared\n",
              plan.device.c_str(), plan.cubin_origin.c_str(), plan.arch.c_str(), plan.grid,
              plan.block_threads, plan.dynamic_shared_bytes);

  const std::int64_t heads = static_cast<std::int64_t>(p.batch) * p.heads;
  const std::size_t q_count = static_cast<std::size_t>(heads) * p.seq_q * p.head_dim;
  const std::size_t kv_count = static_cast<std::size_t>(heads) * p.seq_kv * p.head_dim;
  std::mt19937 random(std::random_device{}());
  const swr_example::RoundedInput q = swr_example::random_input(p.dtype, q_count, random);
  const swr_example::RoundedInput k = swr_example::random_input(p.dtype, kv_count, random);
  const swr_example::RoundedInput v = swr_example::random_input(p.dtype, kv_count, random);
  std::vector<std::uint16_t> o(q_count, 0xffff);  // NaN

  swr::DeviceBuffer dq(q_count * 2), dk(kv_count * 2), dv(kv_count * 2), dout(q_count * 2);
  dq.copy_from_host(q.words.data(), q_count * 2);
  dk.copy_from_host(k.words.data(), kv_count * 2);
  dv.copy_from_host(v.words.data(), kv_count * 2);
  dout.copy_from_host(o.data(), q_count * 2);  // poisoned: an unwritten element stays NaN
  attention.run(p, {dq.pointer(), dk.pointer(), dv.pointer(), dout.pointer()});
  swr::synchronize();
  dout.copy_to_host(o.data(), q_count * 2);

  // Every row of small problems, 512 random rows of large ones.
  const std::int64_t rows = heads * p.seq_q;
  const std::int64_t checked = std::min<std::int64_t>(rows, 512);
  std::uniform_int_distribution<std::int64_t> pick(0, rows - 1);
  swr_example::ErrorTally tally;
  std::vector<double> expected;
  for (std::int64_t n = 0; n < checked; ++n) {
    const std::int64_t index = checked == rows ? n : pick(random);
    reference_row(p, q.values, k.values, v.values, index / p.seq_q,
                  static_cast<int>(index % p.seq_q), expected);
    for (int c = 0; c < p.head_dim; ++c) {
      tally.add(swr::element_to_float(p.dtype, o[static_cast<std::size_t>(index) * p.head_dim + c]),
                expected[c]);
    }
  }
  tally.print(checked, "rows", p.dtype);
  std::printf("nvrtc loaded: %s\n", nvrtc_loaded() ? "yes" : "no");
  return tally.pass(p.dtype) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return swr_example::example_main("swr_attention_example", kUsage, argc, argv, parse, run);
}
