// The C interface (swr/swr.h) over swr::TunedCatalog, swr::Attention and swr::Gemm. Every entry
// point catches what the C++ API throws and turns it into a status and the thread's last error, so
// that no exception crosses into C (or ctypes).
#include "swr/swr.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <tuple>

#include "db/database_location.hpp"
#include "driver/cuda_driver.hpp"
#include "driver/device_identity.hpp"
#include "runtime/tuned_kernel_forms.hpp"
#include "swr/attention.hpp"
#include "swr/attention_backward.hpp"
#include "swr/gemm.hpp"
#include "swr/tuned_catalog.hpp"
#include "swr/usage_error.hpp"

// One family's prepared launch (the others are empty).
struct swr_prepared {
  enum class Family { attention, gemm, attention_backward };
  swr::PreparedAttention attention;
  swr::PreparedGemm gemm;
  swr::PreparedAttentionBackward backward;
  Family family = Family::attention;
};

// The catalog, one launcher per GPU name asked for (the launchers keep the kernels they have
// loaded, so they live as long as the handle) and the launches prepared from them.
struct swr_catalog {
  explicit swr_catalog(swr::TunedCatalog opened) : catalog(std::move(opened)) {}

  swr::TunedCatalog catalog;
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<swr::Attention>> attention;
  std::map<std::string, std::unique_ptr<swr::Gemm>> gemm;
  std::map<std::string, std::unique_ptr<swr::AttentionBackward>> backward;
  // By (family and gpu name, problem key, context id); declared last, so freed first.
  std::map<std::tuple<std::string, std::string, unsigned long long>, std::unique_ptr<swr_prepared>>
      prepared;
};

namespace {

thread_local std::string last_error;

swr_status fail(swr_status status, const std::string& message) {
  last_error = message;
  return status;
}

// Runs `body`, mapping what it throws to a status. The order matters: the driver's errors and
// KernelRefused are runtime_errors, UsageError an invalid_argument.
template <class Body>
swr_status guarded(Body body) {
  try {
    body();
    last_error.clear();
    return SWR_OK;
  } catch (const swr::UsageError& error) {
    return fail(SWR_ERROR_INVALID_ARGUMENT, error.what());
  } catch (const swr::KernelRefused& error) {
    return fail(SWR_ERROR_KERNEL_REFUSED, error.what());
  } catch (const swr::NoDeviceError& error) {
    return fail(SWR_ERROR_NO_DEVICE, error.what());
  } catch (const swr::DriverError& error) {
    return fail(SWR_ERROR_CUDA, error.what());
  } catch (const std::bad_alloc&) {
    return fail(SWR_ERROR_INTERNAL, "out of host memory");
  } catch (const std::exception& error) {
    return fail(SWR_ERROR_INTERNAL, error.what());
  } catch (...) {
    return fail(SWR_ERROR_INTERNAL, "an exception that is not a std::exception");
  }
}

template <class Pointer>
void require(Pointer pointer, const char* name) {
  if (pointer == nullptr) throw swr::UsageError(std::string(name) + " is null: allowed a pointer");
}

swr::DataType dtype_named(const char* text) {
  require(text, "dtype");
  const std::optional<swr::DataType> dtype = swr::parse_data_type(text);
  if (!dtype)
    throw swr::UsageError("unsupported dtype '" + std::string(text) + "': allowed f16, bf16");
  return *dtype;
}

swr::AttentionProblem attention_problem(const swr_attention_problem_v2* given) {
  require(given, "problem");
  // Callers built against this header pass at least its fields; later headers append.
  constexpr std::size_t known = offsetof(swr_attention_problem_v2, causal_align) + sizeof(int);
  if (given->size < known) {
    throw swr::UsageError("swr_attention_problem_v2.size " + std::to_string(given->size) +
                          ": allowed at least " + std::to_string(known) +
                          " (sizeof(swr_attention_problem_v2))");
  }
  swr::AttentionProblem problem;
  problem.batch = given->batch;
  problem.heads = given->heads;
  problem.kv_heads = given->kv_heads;
  problem.seq_q = given->seq_q;
  problem.seq_kv = given->seq_kv;
  problem.head_dim = given->head_dim;
  problem.dtype = dtype_named(given->dtype);
  problem.causal = given->causal != 0;
  if (given->causal_align != SWR_CAUSAL_TOP_LEFT &&
      given->causal_align != SWR_CAUSAL_BOTTOM_RIGHT) {
    throw swr::UsageError("causal_align " + std::to_string(given->causal_align) +
                          ": allowed SWR_CAUSAL_TOP_LEFT (0), SWR_CAUSAL_BOTTOM_RIGHT (1)");
  }
  problem.causal_align = given->causal_align == SWR_CAUSAL_BOTTOM_RIGHT
                             ? swr::CausalAlignment::bottom_right
                             : swr::CausalAlignment::top_left;
  problem.validate();
  return problem;
}

// The first form: multi-head, top-left.
swr::AttentionProblem attention_problem(const swr_attention_problem* given) {
  require(given, "problem");
  const swr_attention_problem_v2 widened{sizeof(swr_attention_problem_v2),
                                         given->batch,
                                         given->heads,
                                         0,
                                         given->seq_q,
                                         given->seq_kv,
                                         given->head_dim,
                                         given->dtype,
                                         given->causal,
                                         SWR_CAUSAL_TOP_LEFT};
  return attention_problem(&widened);
}

swr::ElementStrides element_strides(const int64_t (&given)[4]) {
  return {given[0], given[1], given[2], given[3]};
}

// Tensors with the strides given (null: contiguous).
swr::AttentionTensors attention_tensors(std::uint64_t q, std::uint64_t k, std::uint64_t v,
                                        std::uint64_t o, std::uint64_t workspace,
                                        const swr_attention_strides* strides) {
  swr::AttentionTensors tensors{q, k, v, o, workspace};
  if (strides != nullptr) {
    tensors.q_strides = element_strides(strides->q);
    tensors.k_strides = element_strides(strides->k);
    tensors.v_strides = element_strides(strides->v);
    tensors.o_strides = element_strides(strides->o);
  }
  return tensors;
}

swr::GemmProblem gemm_problem(const swr_gemm_problem* given) {
  require(given, "problem");
  swr::GemmProblem problem{given->m, given->n, given->k, dtype_named(given->dtype)};
  problem.validate();
  return problem;
}

std::string gpu_name(const char* gpu) {
  return gpu == nullptr ? std::string() : std::string(gpu);
}

// A string the caller frees with swr_string_free.
char* copied(const std::string& text) {
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (copy == nullptr) throw std::bad_alloc();
  std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

template <class Problem, class... Filter>
void write_choice(const swr_catalog* catalog, const char* gpu, const Problem& problem, char** json,
                  const Filter&... filter) {
  if (gpu == nullptr || *gpu == '\0') {
    throw swr::UsageError("gpu name is empty: allowed a GPU name as `swr-tune gpus` lists it");
  }
  nlohmann::json output =
      swr::tuned_choice_json(catalog->catalog.best(gpu, problem, filter...), problem);
  output["gpu"] = gpu;
  output["source"] = catalog->catalog.description();
  *json = copied(output.dump());
}

// The launcher for `gpu`, made on first use.
template <class Launcher>
const Launcher& launcher_for(swr_catalog* catalog,
                             std::map<std::string, std::unique_ptr<Launcher>>& launchers,
                             const std::string& gpu) {
  const std::lock_guard lock(catalog->mutex);
  std::unique_ptr<Launcher>& launcher = launchers[gpu];
  if (!launcher) {
    swr::RuntimeOptions options;
    options.gpu = gpu;
    launcher = std::make_unique<Launcher>(catalog->catalog, options);
  }
  return *launcher;
}

// The catalog's handle for `made`, kept once per (family, gpu, problem, context).
swr_prepared* kept_prepared(swr_catalog* catalog, const std::string& family_and_gpu,
                            const std::string& problem_key, unsigned long long context_id,
                            std::unique_ptr<swr_prepared> made) {
  const std::lock_guard lock(catalog->mutex);
  std::unique_ptr<swr_prepared>& kept =
      catalog->prepared[{family_and_gpu, problem_key, context_id}];
  if (!kept) kept = std::move(made);
  return kept.get();
}

const char* family_name(swr_prepared::Family family) {
  switch (family) {
    case swr_prepared::Family::attention:
      return "attention";
    case swr_prepared::Family::gemm:
      return "gemm";
    case swr_prepared::Family::attention_backward:
      return "attention_backward";
  }
  return "unknown";
}

void require_family(const swr_prepared* prepared, swr_prepared::Family family) {
  require(prepared, "prepared");
  if (prepared->family != family) {
    throw swr::UsageError(std::string("a prepared ") + family_name(prepared->family) +
                          " launch: allowed one of swr_prepare_" + family_name(family));
  }
}

swr::DqRequirement dq_requirement(uint32_t flags) {
  if ((flags & ~SWR_BACKWARD_DETERMINISTIC) != 0) {
    throw swr::UsageError("flags " + std::to_string(flags) +
                          ": allowed 0 or SWR_BACKWARD_DETERMINISTIC (1)");
  }
  return (flags & SWR_BACKWARD_DETERMINISTIC) != 0 ? swr::DqRequirement::deterministic
                                                   : swr::DqRequirement::any;
}

void run_attention(swr_catalog* catalog, const char* gpu, const swr::AttentionProblem& problem,
                   const swr_attention_tensors& tensors, const swr_attention_strides* strides,
                   uintptr_t stream) {
  launcher_for(catalog, catalog->attention, gpu_name(gpu))
      .run(
          problem,
          attention_tensors(tensors.q, tensors.k, tensors.v, tensors.o, tensors.workspace, strides),
          reinterpret_cast<swr::StreamHandle>(stream));
}

swr_prepared* prepare_attention(swr_catalog* catalog, const char* gpu,
                                const swr::AttentionProblem& problem) {
  auto made = std::make_unique<swr_prepared>();
  made->attention = launcher_for(catalog, catalog->attention, gpu_name(gpu)).prepare(problem);
  made->family = swr_prepared::Family::attention;
  const unsigned long long context = made->attention.context_id();
  return kept_prepared(catalog, "attention " + gpu_name(gpu), problem.key(), context,
                       std::move(made));
}

void launch_prepared_attention(const swr_prepared* prepared, const swr::AttentionTensors& tensors,
                               uint32_t flags, uintptr_t stream) {
  require_family(prepared, swr_prepared::Family::attention);
  if ((flags & ~SWR_WORKSPACE_ZEROED) != 0) {
    throw swr::UsageError("flags " + std::to_string(flags) +
                          ": allowed 0 or SWR_WORKSPACE_ZEROED (1)");
  }
  prepared->attention.run(tensors, reinterpret_cast<swr::StreamHandle>(stream),
                          (flags & SWR_WORKSPACE_ZEROED) != 0);
}

}  // namespace

extern "C" {

const char* swr_version(void) {
  return SWR_VERSION;
}

const char* swr_status_name(int status) {
  switch (status) {
    case SWR_OK:
      return "ok";
    case SWR_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case SWR_ERROR_KERNEL_REFUSED:
      return "kernel refused";
    case SWR_ERROR_NO_DEVICE:
      return "no device";
    case SWR_ERROR_CUDA:
      return "CUDA error";
    case SWR_ERROR_INTERNAL:
      return "internal error";
    default:
      return "unknown status";
  }
}

const char* swr_last_error(void) {
  return last_error.c_str();
}

swr_status swr_catalog_open(const char* path, swr_catalog** catalog) {
  return guarded([&] {
    require(catalog, "catalog");
    *catalog = nullptr;
    require(path, "path");
    *catalog = new swr_catalog(swr::TunedCatalog::open(path));
  });
}

swr_status swr_default_catalog_path(char** path) {
  return guarded([&] {
    require(path, "path");
    *path = nullptr;
    *path = copied(swr::db::locate_database().path.string());
  });
}

void swr_catalog_close(swr_catalog* catalog) {
  delete catalog;
}

swr_status swr_catalog_description(const swr_catalog* catalog, char** text) {
  return guarded([&] {
    require(catalog, "catalog");
    require(text, "text");
    *text = copied(catalog->catalog.description());
  });
}

swr_status swr_best_attention(const swr_catalog* catalog, const char* gpu,
                              const swr_attention_problem* problem, char** json) {
  return guarded([&] {
    require(catalog, "catalog");
    require(json, "json");
    *json = nullptr;
    write_choice(catalog, gpu, attention_problem(problem), json);
  });
}

swr_status swr_best_gemm(const swr_catalog* catalog, const char* gpu,
                         const swr_gemm_problem* problem, char** json) {
  return guarded([&] {
    require(catalog, "catalog");
    require(json, "json");
    *json = nullptr;
    write_choice(catalog, gpu, gemm_problem(problem), json);
  });
}

swr_status swr_best_attention_v2(const swr_catalog* catalog, const char* gpu,
                                 const swr_attention_problem_v2* problem, char** json) {
  return guarded([&] {
    require(catalog, "catalog");
    require(json, "json");
    *json = nullptr;
    write_choice(catalog, gpu, attention_problem(problem), json);
  });
}

swr_status swr_run_attention(swr_catalog* catalog, const char* gpu,
                             const swr_attention_problem* problem,
                             const swr_attention_tensors* tensors, uintptr_t stream) {
  return guarded([&] {
    require(catalog, "catalog");
    require(tensors, "tensors");
    run_attention(catalog, gpu, attention_problem(problem), *tensors, nullptr, stream);
  });
}

swr_status swr_run_attention_v2(swr_catalog* catalog, const char* gpu,
                                const swr_attention_problem_v2* problem,
                                const swr_attention_tensors* tensors,
                                const swr_attention_strides* strides, uintptr_t stream) {
  return guarded([&] {
    require(catalog, "catalog");
    require(tensors, "tensors");
    run_attention(catalog, gpu, attention_problem(problem), *tensors, strides, stream);
  });
}

swr_status swr_run_gemm(swr_catalog* catalog, const char* gpu, const swr_gemm_problem* problem,
                        const swr_gemm_tensors* tensors, uintptr_t stream) {
  return guarded([&] {
    require(catalog, "catalog");
    require(tensors, "tensors");
    const swr::GemmProblem asked = gemm_problem(problem);
    const swr::GemmTensors device{tensors->a, tensors->b, tensors->c};
    launcher_for(catalog, catalog->gemm, gpu_name(gpu))
        .run(asked, device, reinterpret_cast<swr::StreamHandle>(stream));
  });
}

swr_status swr_prepare_attention(swr_catalog* catalog, const char* gpu,
                                 const swr_attention_problem* problem, swr_prepared** prepared) {
  return guarded([&] {
    require(catalog, "catalog");
    require(prepared, "prepared");
    *prepared = nullptr;
    *prepared = prepare_attention(catalog, gpu, attention_problem(problem));
  });
}

swr_status swr_prepare_attention_v2(swr_catalog* catalog, const char* gpu,
                                    const swr_attention_problem_v2* problem,
                                    swr_prepared** prepared) {
  return guarded([&] {
    require(catalog, "catalog");
    require(prepared, "prepared");
    *prepared = nullptr;
    *prepared = prepare_attention(catalog, gpu, attention_problem(problem));
  });
}

swr_status swr_prepare_gemm(swr_catalog* catalog, const char* gpu, const swr_gemm_problem* problem,
                            swr_prepared** prepared) {
  return guarded([&] {
    require(catalog, "catalog");
    require(prepared, "prepared");
    *prepared = nullptr;
    const swr::GemmProblem asked = gemm_problem(problem);
    auto made = std::make_unique<swr_prepared>();
    made->gemm = launcher_for(catalog, catalog->gemm, gpu_name(gpu)).prepare(asked);
    made->family = swr_prepared::Family::gemm;
    const unsigned long long context = made->gemm.context_id();
    *prepared =
        kept_prepared(catalog, "gemm " + gpu_name(gpu), asked.key(), context, std::move(made));
  });
}

swr_status swr_launch_attention(const swr_prepared* prepared, uint64_t q, uint64_t k, uint64_t v,
                                uint64_t o, uint64_t workspace, uint32_t flags, uintptr_t stream) {
  return guarded([&] {
    launch_prepared_attention(prepared, attention_tensors(q, k, v, o, workspace, nullptr), flags,
                              stream);
  });
}

swr_status swr_launch_attention_v2(const swr_prepared* prepared, uint64_t q, uint64_t k, uint64_t v,
                                   uint64_t o, const swr_attention_strides* strides,
                                   uint64_t workspace, uint32_t flags, uintptr_t stream) {
  return guarded([&] {
    launch_prepared_attention(prepared, attention_tensors(q, k, v, o, workspace, strides), flags,
                              stream);
  });
}

swr_status swr_launch_gemm(const swr_prepared* prepared, uint64_t a, uint64_t b, uint64_t c,
                           uintptr_t stream) {
  return guarded([&] {
    require_family(prepared, swr_prepared::Family::gemm);
    prepared->gemm.run(swr::GemmTensors{a, b, c}, reinterpret_cast<swr::StreamHandle>(stream));
  });
}

swr_status swr_launch_attention_v3(const swr_prepared* prepared, uint64_t q, uint64_t k, uint64_t v,
                                   uint64_t o, uint64_t lse, const swr_attention_strides* strides,
                                   uint64_t workspace, uint32_t flags, uintptr_t stream) {
  return guarded([&] {
    swr::AttentionTensors tensors = attention_tensors(q, k, v, o, workspace, strides);
    tensors.lse = lse;
    launch_prepared_attention(prepared, tensors, flags, stream);
  });
}

swr_status swr_best_attention_backward(const swr_catalog* catalog, const char* gpu,
                                       const swr_attention_problem_v2* problem, uint32_t flags,
                                       char** json) {
  return guarded([&] {
    require(catalog, "catalog");
    require(json, "json");
    *json = nullptr;
    const swr::DqRequirement dq = dq_requirement(flags);
    write_choice(catalog, gpu, swr::AttentionBackwardProblem{attention_problem(problem)}, json, dq);
  });
}

swr_status swr_prepare_attention_backward(swr_catalog* catalog, const char* gpu,
                                          const swr_attention_problem_v2* problem, uint32_t flags,
                                          swr_prepared** prepared) {
  return guarded([&] {
    require(catalog, "catalog");
    require(prepared, "prepared");
    *prepared = nullptr;
    const swr::DqRequirement dq = dq_requirement(flags);
    const swr::AttentionBackwardProblem asked{attention_problem(problem)};
    auto made = std::make_unique<swr_prepared>();
    made->backward = launcher_for(catalog, catalog->backward, gpu_name(gpu)).prepare(asked, dq);
    made->family = swr_prepared::Family::attention_backward;
    const unsigned long long context = made->backward.context_id();
    const std::string family = dq == swr::DqRequirement::deterministic
                                   ? "attention_backward deterministic "
                                   : "attention_backward ";
    *prepared =
        kept_prepared(catalog, family + gpu_name(gpu), asked.key(), context, std::move(made));
  });
}

swr_status swr_attention_backward_workspace_bytes(const swr_prepared* prepared, uint64_t* bytes) {
  return guarded([&] {
    require(bytes, "bytes");
    *bytes = 0;
    require_family(prepared, swr_prepared::Family::attention_backward);
    *bytes = prepared->backward.workspace_bytes();
  });
}

swr_status swr_launch_attention_backward(const swr_prepared* prepared, uint64_t q, uint64_t k,
                                         uint64_t v, uint64_t o, uint64_t d_o, uint64_t lse,
                                         uint64_t dq, uint64_t dk, uint64_t dv,
                                         const swr_attention_backward_strides* strides,
                                         uint64_t workspace, uint64_t workspace_bytes,
                                         uintptr_t stream) {
  return guarded([&] {
    require_family(prepared, swr_prepared::Family::attention_backward);
    swr::AttentionBackwardTensors tensors;
    tensors.q = q;
    tensors.k = k;
    tensors.v = v;
    tensors.o = o;
    tensors.d_o = d_o;
    tensors.lse = lse;
    tensors.dq = dq;
    tensors.dk = dk;
    tensors.dv = dv;
    tensors.workspace = workspace;
    tensors.workspace_bytes = workspace_bytes;
    if (strides != nullptr) {
      tensors.q_strides = element_strides(strides->q);
      tensors.k_strides = element_strides(strides->k);
      tensors.v_strides = element_strides(strides->v);
      tensors.o_strides = element_strides(strides->o);
      tensors.d_o_strides = element_strides(strides->d_o);
      tensors.dq_strides = element_strides(strides->dq);
      tensors.dk_strides = element_strides(strides->dk);
      tensors.dv_strides = element_strides(strides->dv);
    }
    prepared->backward.run(tensors, reinterpret_cast<swr::StreamHandle>(stream));
  });
}

swr_status swr_device_gpu_name(int ordinal, char** name) {
  return guarded([&] {
    require(name, "name");
    *name = nullptr;
    if (ordinal < 0) {
      throw swr::UsageError("device ordinal " + std::to_string(ordinal) + ": allowed 0 or more");
    }
    const swr::CudaDriver& driver = swr::CudaDriver::get();
    CUdevice device = 0;
    SWR_CU(driver, cuDeviceGet(&device, ordinal));
    *name = copied(swr::identify_device(device).gpu_name);
  });
}

void swr_string_free(char* text) {
  std::free(text);
}

}  // extern "C"
