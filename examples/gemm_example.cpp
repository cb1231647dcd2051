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
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "example_main.hpp"
#include "lookup_report.hpp"
#include "swr/device_buffer.hpp"
#include "swr/gemm.hpp"
#include "swr/sixteen_bit.hpp"
#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"

namespace {

using swr_example::nvrtc_loaded;
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
  std::string catalog;
  std::string gpu;
  swr::GemmProblem problem{1000, 1016, 264, swr::DataType::f16};
  bool require_gpu = false;
};

int to_int(const std::string& option, const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 1 || value > (1L << 30)) {
    throw swr::UsageError("bad " + option + " '" + text + "': allowed a positive integer");
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
    } else if (option == "--m") {
      arguments.problem.m = to_int(option, value());
    } else if (option == "--n") {
      arguments.problem.n = to_int(option, value());
    } else if (option == "--k") {
      arguments.problem.k = to_int(option, value());
    } else if (option == "--size") {
      arguments.problem.m = arguments.problem.n = arguments.problem.k = to_int(option, value());
    } else if (option == "--dtype") {
      const std::string dtype = value();
      if (dtype != "f16" && dtype != "bf16") {
        throw swr::UsageError("bad --dtype '" + dtype + "': allowed f16, bf16");
      }
      arguments.problem.dtype = dtype == "f16" ? swr::DataType::f16 : swr::DataType::bf16;
    } else if (option == "--require-gpu") {
      arguments.require_gpu = true;
    } else {
      throw swr::UsageError("unknown option '" + option + "'");
    }
  }
  if (arguments.catalog.empty()) throw swr::UsageError("missing --db PATH or --export DIR");
  arguments.problem.validate();  // n and k multiples of 8, every matrix below 2^31 elements
  return arguments;
}

int run(const Arguments& arguments) {
  const swr::GemmProblem& p = arguments.problem;
  const swr::TunedCatalog catalog = swr::TunedCatalog::open(arguments.catalog);
  std::printf("catalog: %s\nproblem: %s\n", catalog.description().c_str(), p.key().c_str());

  std::string why;
  if (!swr::cuda_device_present(&why)) {
    if (!arguments.gpu.empty()) print_choice(catalog.best(arguments.gpu, p));
    std::printf("launch: skipped, %s\n", why.c_str());
    return arguments.require_gpu ? 1 : 0;
  }
  swr::RuntimeOptions options;
  options.gpu = arguments.gpu;
  const swr::Gemm gemm(catalog, options);
  const swr::GemmPlan plan = gemm.plan(p);
  print_choice(plan.choice);
  std::printf(
      "device: %s\ncubin: %s (%s), grid %d x %d threads, %d bytes shared, swizzle axis %d group "
      "%d\n",
      plan.device.c_str(), plan.cubin_origin.c_str(), plan.arch.c_str(), plan.grid,
      plan.block_threads, plan.dynamic_shared_bytes, plan.swizzle_axis, plan.swizzle_group);

  auto encode = [&](float x) { return swr::float_to_element(p.dtype, x); };
  auto decode = [&](std::uint16_t x) { return swr::element_to_float(p.dtype, x); };
  const std::size_t a_count = static_cast<std::size_t>(p.m) * p.k;
  const std::size_t b_count = static_cast<std::size_t>(p.k) * p.n;
  const std::size_t c_count = static_cast<std::size_t>(p.m) * p.n;
  std::mt19937 random(std::random_device{}());
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<std::uint16_t> a(a_count), b(b_count), c(c_count, 0xffff);  // c: NaN
  std::vector<float> af(a_count), bf(b_count);  // the rounded inputs, as floats
  for (std::size_t i = 0; i < a_count; ++i) af[i] = decode(a[i] = encode(uniform(random)));
  for (std::size_t i = 0; i < b_count; ++i) bf[i] = decode(b[i] = encode(uniform(random)));

  swr::DeviceBuffer da(a_count * 2), db(b_count * 2), dc(c_count * 2);
  da.copy_from_host(a.data(), a_count * 2);
  db.copy_from_host(b.data(), b_count * 2);
  dc.copy_from_host(c.data(), c_count * 2);  // poisoned: an unwritten element stays NaN
  gemm.run(p, {da.pointer(), db.pointer(), dc.pointer()});
  swr::synchronize();
  dc.copy_to_host(c.data(), c_count * 2);

  // Every element of small problems, 16384 random ones of large ones.
  const bool every = static_cast<double>(c_count) * p.k <= (1 << 28);
  const std::size_t checked = every ? c_count : 16384;
  std::uniform_int_distribution<std::size_t> pick(0, c_count - 1);
  double error = 0, norm = 0;
  std::size_t non_finite = 0;
  for (std::size_t n = 0; n < checked; ++n) {
    const std::size_t index = every ? n : pick(random);
    const std::size_t row = index / p.n, column = index % p.n;
    double expected = 0;
    for (int i = 0; i < p.k; ++i) {
      expected +=
          static_cast<double>(af[row * p.k + i]) * bf[static_cast<std::size_t>(i) * p.n + column];
    }
    const float got = decode(c[index]);
    if (!std::isfinite(got)) ++non_finite;
    error += (got - expected) * (got - expected);
    norm += expected * expected;
  }
  const double relative = std::sqrt(error / norm);
  const double tolerance = p.dtype == swr::DataType::f16 ? 2e-3 : 1e-2;
  const bool pass = non_finite == 0 && relative < tolerance;
  std::printf("check: %zu elements, relative error %.2e (bound %.0e), %zu non-finite: %s\n",
              checked, relative, tolerance, non_finite, pass ? "PASS" : "FAIL");
  std::printf("nvrtc loaded: %s\n", nvrtc_loaded() ? "yes" : "no");
  return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return swr_example::example_main("swr_gemm_example", kUsage, argc, argv, parse, run);
}
