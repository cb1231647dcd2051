// Runs the tuned GEMM kernel from a program that sees only swr's public headers: open a results
// database or an export, ask for the best kernel for a shape, launch C = A · B on random data,
// and check the answer against a reference computed here in double precision.
//
//   swr_gemm_example --export kernels-h200/ --m 1000 --n 1016 --k 264
//   swr_gemm_example --db results.db --gpu h200 --size 4096 --dtype bf16   (lookup only without a
//                                                                          GPU)
//
// Exit code 0 when the answer matches (or, without a GPU, once the lookup is printed), 1 when it
// does not or something fails, 2 for bad arguments.
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "example_main.hpp"
#include "example_run.hpp"
#include "swr/device_buffer.hpp"
#include "swr/gemm.hpp"
#include "swr/tuned_catalog.hpp"

namespace {

using swr_example::nvrtc_loaded;
using swr_example::positive_int;
using swr_example::print_choice;

constexpr const char* kUsage =
    "(--db PATH --gpu NAME | --export DIR) [shape] [--require-gpu]\n"
    "Looks up the best tuned GEMM kernel for a shape in a results database or an export,\n"
    "launches C = A * B on random data and checks it (without a GPU: the lookup only).\n"
    "  --db PATH         results database (with --gpu: the GPU whose results to use)\n"
    "  --export DIR      an export (swr-tune export)\n"
    "  --m N --n N --k N | --size N, --dtype f16|bf16\n"
    "                    the shape (default: m 1000, n 1016, k 264, f16)\n"
    "  --require-gpu     exit 1 when there is no GPU to launch on\n"
    "Exit code: 0 the answer matches (or the lookup was printed), 1 a failure, 2 bad arguments.\n";

struct Arguments {
  swr_example::CommonArguments common;
  swr::GemmProblem problem{1000, 1016, 264, swr::DataType::f16};
};

Arguments parse(int argc, char** argv) {
  Arguments arguments;
  swr::GemmProblem& p = arguments.problem;
  swr_example::parse_arguments(argc, argv, arguments.common,
                               [&](const std::string& option, auto value) {
                                 if (option == "--m") {
                                   p.m = positive_int(option, value());
                                 } else if (option == "--n") {
                                   p.n = positive_int(option, value());
                                 } else if (option == "--k") {
                                   p.k = positive_int(option, value());
                                 } else if (option == "--size") {
                                   p.m = p.n = p.k = positive_int(option, value());
                                 } else {
                                   return false;
                                 }
                                 return true;
                               });
  p.dtype = arguments.common.dtype;
  p.validate();  // n and k multiples of 8, every matrix below 2^31 elements
  return arguments;
}

int run(const Arguments& arguments) {
  const swr::GemmProblem& p = arguments.problem;
  const swr::TunedCatalog catalog = swr::TunedCatalog::open(arguments.common.catalog);
  if (const auto exit_code = lookup_only_without_device(catalog, arguments.common, p)) {
    return *exit_code;
  }
  swr::RuntimeOptions options;
  options.gpu = arguments.common.gpu;
  const swr::Gemm gemm(catalog, options);
  const swr::GemmPlan plan = gemm.plan(p);
  print_choice(plan.choice);
  std::printf(
      "device: %s\ncubin: %s (%s), grid %d x %d threads, %d bytes shared, swizzle axis %d group "
      "%d\n",
      plan.device.c_str(), plan.cubin_origin.c_str(), plan.arch.c_str(), plan.grid,
      plan.block_threads, plan.dynamic_shared_bytes, plan.swizzle_axis, plan.swizzle_group);

  const std::size_t a_count = static_cast<std::size_t>(p.m) * p.k;
  const std::size_t b_count = static_cast<std::size_t>(p.k) * p.n;
  const std::size_t c_count = static_cast<std::size_t>(p.m) * p.n;
  std::mt19937 random(std::random_device{}());
  const swr_example::RoundedInput a = swr_example::random_input(p.dtype, a_count, random);
  const swr_example::RoundedInput b = swr_example::random_input(p.dtype, b_count, random);
  std::vector<std::uint16_t> c(c_count, 0xffff);  // NaN

  swr::DeviceBuffer da(a_count * 2), db(b_count * 2), dc(c_count * 2);
  da.copy_from_host(a.words.data(), a_count * 2);
  db.copy_from_host(b.words.data(), b_count * 2);
  dc.copy_from_host(c.data(), c_count * 2);  // poisoned: an unwritten element stays NaN
  gemm.run(p, {da.pointer(), db.pointer(), dc.pointer()});
  swr::synchronize();
  dc.copy_to_host(c.data(), c_count * 2);

  // Every element of small problems, 16384 random ones of large ones.
  const bool every = static_cast<double>(c_count) * p.k <= (1 << 28);
  const std::size_t checked = every ? c_count : 16384;
  std::uniform_int_distribution<std::size_t> pick(0, c_count - 1);
  swr_example::ErrorTally tally;
  for (std::size_t n = 0; n < checked; ++n) {
    const std::size_t index = every ? n : pick(random);
    const std::size_t row = index / p.n, column = index % p.n;
    double expected = 0;
    for (int i = 0; i < p.k; ++i) {
      expected += static_cast<double>(a.values[row * p.k + i]) *
                  b.values[static_cast<std::size_t>(i) * p.n + column];
    }
    tally.add(swr::element_to_float(p.dtype, c[index]), expected);
  }
  tally.print(static_cast<long long>(checked), "elements", p.dtype);
  std::printf("nvrtc loaded: %s\n", nvrtc_loaded() ? "yes" : "no");
  return tally.pass(p.dtype) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return swr_example::example_main("swr_gemm_example", kUsage, argc, argv, parse, run);
}
