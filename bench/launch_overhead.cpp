// The C side of one swr.torch.attention call, timed from C++ with no Python in between (issue 15):
// swr_launch_attention of a prepared launch, and the driver calls it is made of, each timed alone.
//   build/bench/swr_launch_overhead CATALOG [BxHxSxD [f16|bf16 [causal]]] [--calls N] [--repeats R]
// CATALOG: a results database or an export directory; the shape defaults to 16x8x777x64 f16 (the
// overhead benchmark's, bench/swr_torch_overhead.py, which runs this and puts its figures beside
// the Python ones). Prints one JSON object, microseconds per call, medians over R repetitions of N
// calls enqueued back to back on the legacy default stream (then one synchronisation, untimed):
//   launch_us            swr_launch_attention with workspace 0 (swr's pooled tile counter);
//   launch_zeroed_us     the same with a zeroed counter of the caller's per call and
//                        SWR_WORKSPACE_ZEROED: no pool (launch_us - this = the pool's take);
//   context_check_us     cuCtxGetCurrent + cuCtxGetId, the prepared context's check per launch;
//   capture_query_us     cuStreamIsCapturing, the pool's check per launch;
//   memset_us            cuMemsetD32Async of one int: the clear per launch the pool replaced.
// What launch_zeroed_us leaves beyond the context check is the driver's cuLaunchKernel and the
// C ABI's own code (argument checks, the exception guard).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "driver/cuda_driver.hpp"
#include "swr/device_buffer.hpp"
#include "swr/swr.h"

namespace {

struct Options {
  std::string catalog;
  int batch = 16, heads = 8, seq = 777, head_dim = 64;
  std::string dtype = "f16";
  bool causal = false;
  int calls = 100, repeats = 30;
};

[[noreturn]] void bad_input(const std::string& message) {
  std::fprintf(stderr, "swr_launch_overhead: %s\n", message.c_str());
  std::exit(2);
}

int positive(const std::string& name, const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < 1 || value > 1000000) {
    bad_input(name + " '" + text + "': allowed a whole number from 1 to 1000000");
  }
  return static_cast<int>(value);
}

Options parse(int argc, char** argv) {
  Options options;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if ((argument == "--calls" || argument == "--repeats") && i + 1 < argc) {
      (argument == "--calls" ? options.calls : options.repeats) = positive(argument, argv[++i]);
    } else if (argument.starts_with("--")) {
      bad_input("unknown option '" + argument + "': allowed --calls N, --repeats R");
    } else {
      positional.push_back(argument);
    }
  }
  if (positional.empty() || positional.size() > 4) {
    bad_input(
        "usage: swr_launch_overhead CATALOG [BxHxSxD [f16|bf16 [causal]]] [--calls N] "
        "[--repeats R]");
  }
  options.catalog = positional[0];
  if (positional.size() > 1 && std::sscanf(positional[1].c_str(), "%dx%dx%dx%d", &options.batch,
                                           &options.heads, &options.seq, &options.head_dim) != 4) {
    bad_input("shape '" + positional[1] + "': allowed BxHxSxD, e.g. 16x8x777x64");
  }
  if (positional.size() > 2) options.dtype = positional[2];
  if (options.dtype != "f16" && options.dtype != "bf16") {
    bad_input("dtype '" + options.dtype + "': allowed f16, bf16");
  }
  if (positional.size() > 3 && positional[3] != "causal") {
    bad_input("'" + positional[3] + "': allowed causal (or nothing)");
  }
  options.causal = positional.size() > 3;
  return options;
}

void check(swr_status status, const char* call) {
  if (status != SWR_OK) {
    std::fprintf(stderr, "swr_launch_overhead: %s: %s\n", call, swr_last_error());
    std::exit(status == SWR_ERROR_INVALID_ARGUMENT ? 2 : 1);  // e.g. no catalog at that path
  }
}

// Microseconds per call: the median over `repeats` of `calls` calls timed together, the queue
// drained (untimed) before each repetition.
double per_call_us(const Options& options, const std::function<void(int)>& call) {
  std::vector<double> figures;
  for (int repeat = 0; repeat < options.repeats; ++repeat) {
    swr::synchronize();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < options.calls; ++i) call(i);
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    figures.push_back(elapsed.count() / options.calls);
  }
  swr::synchronize();
  std::nth_element(figures.begin(), figures.begin() + figures.size() / 2, figures.end());
  return figures[figures.size() / 2];
}

int run(const Options& options) {
  swr_catalog* catalog = nullptr;
  check(swr_catalog_open(options.catalog.c_str(), &catalog), "swr_catalog_open");
  const std::size_t elements =
      static_cast<std::size_t>(options.batch) * options.heads * options.seq * options.head_dim;
  // The buffers make the device's primary context current, where the launch is prepared.
  swr::DeviceBuffer q(elements * 2), k(elements * 2), v(elements * 2), o(elements * 2);
  swr::DeviceBuffer counters(sizeof(int) * options.calls);
  const swr::CudaDriver& driver = swr::CudaDriver::get();
  for (const swr::DeviceBuffer* buffer : {&q, &k, &v}) {
    SWR_CU(driver, cuMemsetD8Async(buffer->pointer(), 0, buffer->size(), nullptr));
  }
  const swr_attention_problem problem{
      options.batch,    options.heads,         options.seq,           options.seq,
      options.head_dim, options.dtype.c_str(), options.causal ? 1 : 0};
  swr_prepared* prepared = nullptr;
  check(swr_prepare_attention(catalog, nullptr, &problem, &prepared), "swr_prepare_attention");
  auto launch = [&](std::uint64_t workspace, std::uint32_t flags) {
    check(swr_launch_attention(prepared, q.pointer(), k.pointer(), v.pointer(), o.pointer(),
                               workspace, flags, 0),
          "swr_launch_attention");
  };
  launch(0, 0);  // the first launch allocates the stream's pool

  const double launch_us = per_call_us(options, [&](int) { launch(0, 0); });
  const double launch_zeroed_us = per_call_us(options, [&](int i) {
    if (i == 0) {  // all zeroed in stream order first: one memset per run of N calls
      SWR_CU(driver, cuMemsetD32Async(counters.pointer(), 0, options.calls, nullptr));
    }
    launch(counters.pointer() + sizeof(int) * i, SWR_WORKSPACE_ZEROED);
  });
  const double context_check_us = per_call_us(options, [&](int) {
    CUcontext current = nullptr;
    unsigned long long id = 0;
    SWR_CU(driver, cuCtxGetCurrent(&current));
    SWR_CU(driver, cuCtxGetId(current, &id));
  });
  const double capture_query_us = per_call_us(options, [&](int) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    SWR_CU(driver, cuStreamIsCapturing(nullptr, &status));
  });
  const double memset_us = per_call_us(options, [&](int i) {
    SWR_CU(driver, cuMemsetD32Async(counters.pointer() + sizeof(int) * i, 0, 1, nullptr));
  });
  swr_catalog_close(catalog);

  std::printf(
      "{\"launch_us\": %.3f, \"launch_zeroed_us\": %.3f, \"context_check_us\": %.3f, "
      "\"capture_query_us\": %.3f, \"memset_us\": %.3f, \"calls\": %d, \"repeats\": %d}\n",
      launch_us, launch_zeroed_us, context_check_us, capture_query_us, memset_us, options.calls,
      options.repeats);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  try {
    return run(options);
  } catch (const std::exception& error) {  // no device, a failed driver call
    std::fprintf(stderr, "swr_launch_overhead: %s\n", error.what());
    return 1;
  }
}
