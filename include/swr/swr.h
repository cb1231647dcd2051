/* The C interface of the swr runtime (libswr_runtime.so): open a catalog of tuned kernels (a
   results database or an export directory), ask which kernel is best for an attention or GEMM
   problem on a named GPU (as JSON text), and run it on the caller's device pointers and stream.

   Plain C with opaque handles, so that any language with a C FFI (Python's ctypes, python/swr)
   can use it. No C++ exception crosses it: every call returns a swr_status, and swr_last_error()
   holds the text of the last failure on the calling thread. CUDA handles cross it as integers,
   so this header needs no <cuda.h>. */
#ifndef SWR_SWR_H
#define SWR_SWR_H

#include <stdint.h>

#include "swr/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum swr_status {
  SWR_OK = 0,
  /* A bad argument: a null pointer, a path that is no results database or export, a dtype that
     is not f16 or bf16, a problem that is not valid (e.g. a head dim with no template). */
  SWR_ERROR_INVALID_ARGUMENT = 1,
  /* The call cannot run: nothing tuned serves the problem on that GPU, a cubin for an arch the
     device cannot run, no cubin to be had without NVRTC (swr::KernelRefused). */
  SWR_ERROR_KERNEL_REFUSED = 2,
  /* No CUDA driver could be loaded or no device is present ($SWR_DEVICE past the last one). */
  SWR_ERROR_NO_DEVICE = 3,
  /* A CUDA driver call failed; the text names the call and the driver's error. */
  SWR_ERROR_CUDA = 4,
  /* Anything else (out of memory, a bug); the text says what. */
  SWR_ERROR_INTERNAL = 5
} swr_status;

/* A catalog of tuned kernels with the launchers made from it; thread-safe. */
typedef struct swr_catalog swr_catalog;

typedef struct swr_attention_problem {
  int batch;
  int heads;
  int seq_q;  /* query rows per (batch, head) */
  int seq_kv; /* key/value rows per (batch, head) */
  int head_dim;
  const char* dtype;     /* "f16" or "bf16" */
  int causal;            /* nonzero: top-left aligned causal mask (PyTorch's is_causal) */
} swr_attention_problem; /* multi-head; swr_attention_problem_v2 below has K/V heads */

/* [batch, heads, seq, head_dim] tensors as CUdeviceptr values (K and V: kv_heads heads), row-major
   unless swr_attention_strides says otherwise. workspace: 4 bytes for the dynamic-persistence
   variants' tile counter, or 0 to let swr take one from the zeroed pool it keeps per stream (no
   clear enqueued per launch; swr::AttentionTensors says more). */
typedef struct swr_attention_tensors {
  uint64_t q;
  uint64_t k;
  uint64_t v;
  uint64_t o;
  uint64_t workspace;
} swr_attention_tensors;

/* An attention problem with what swr_attention_problem lacks: K/V heads (grouped-query and
   multi-query attention) and where the causal diagonal lies. Set `size` to
   sizeof(swr_attention_problem_v2) as your header defines it: later versions append fields, and a
   caller built against this one keeps working. */
typedef struct swr_attention_problem_v2 {
  uint32_t size;
  int batch;
  int heads;    /* query heads */
  int kv_heads; /* K/V heads, a divisor of heads; 0: heads (multi-head) */
  int seq_q;
  int seq_kv;
  int head_dim;
  const char* dtype; /* "f16" or "bf16" */
  int causal;
  /* With causal: SWR_CAUSAL_TOP_LEFT (query row i sees keys j <= i, PyTorch's is_causal) or
     SWR_CAUSAL_BOTTOM_RIGHT (j <= i + seq_kv - seq_q: prefill over a KV cache; rows that see no
     key give 0). */
  int causal_align;
} swr_attention_problem_v2;

#define SWR_CAUSAL_TOP_LEFT 0
#define SWR_CAUSAL_BOTTOM_RIGHT 1

/* Element strides of Q, K, V and O, each seen as [batch, heads, seq, head_dim]: {batch, head,
   seq, dim} per tensor (what torch.Tensor.stride() gives). A tensor's four 0s: contiguous. dim
   must be 1 and rows must not overlap (SWR_ERROR_INVALID_ARGUMENT); a layout a kernel cannot read
   (a row not 16-byte aligned) is SWR_ERROR_KERNEL_REFUSED. */
typedef struct swr_attention_strides {
  int64_t q[4];
  int64_t k[4];
  int64_t v[4];
  int64_t o[4];
} swr_attention_strides;

/* C = A · B, all row-major: A [m x k], B [k x n], C [m x n]. */
typedef struct swr_gemm_problem {
  int m;
  int n;
  int k;
  const char* dtype; /* "f16" or "bf16" */
} swr_gemm_problem;

typedef struct swr_gemm_tensors {
  uint64_t a;
  uint64_t b;
  uint64_t c;
} swr_gemm_tensors;

/* The library's version, e.g. "0.1.0". */
SWR_API const char* swr_version(void);
/* "ok", "invalid argument", "kernel refused", "no device", "CUDA error", "internal error". */
SWR_API const char* swr_status_name(int status);
/* The message of the last failed call on this thread ("" after a call that succeeded). Valid
   until the next swr call on this thread. */
SWR_API const char* swr_last_error(void);

/* Opens a results database (read-only) or an export directory (or its manifest.json). */
SWR_API swr_status swr_catalog_open(const char* path, swr_catalog** catalog);
/* The results database swr-tune uses when given no --db ($SWR_DB, else
   $XDG_CACHE_HOME/swr/results.db, else ~/.cache/swr/results.db), as a string to free with
   swr_string_free: the catalog a binding opens when given no path. Reads nothing. */
SWR_API swr_status swr_default_catalog_path(char** path);
/* Frees the catalog and its launchers; null is allowed. Kernels already enqueued still run. */
SWR_API void swr_catalog_close(swr_catalog* catalog);
/* "results database /path" or "export /dir", as a string to free with swr_string_free. */
SWR_API swr_status swr_catalog_description(const swr_catalog* catalog, char** text);

/* The best kernel for a problem on the GPU named `gpu` ("h200", as `swr-tune gpus` names it),
   as JSON text to free with swr_string_free: the form `swr-tune query --json` prints
   ({"family", "asked", "match": "exact"|"nearest"|"none", "distance", "tuned_shape",
   "kernel": {config_key, measured: {median_ms, tflops, ...}, ...} or "why", "gpu", "source"}).
   A problem nothing tuned serves is SWR_OK with "match": "none". Needs no GPU. */
SWR_API swr_status swr_best_attention(const swr_catalog* catalog, const char* gpu,
                                      const swr_attention_problem* problem, char** json);
SWR_API swr_status swr_best_gemm(const swr_catalog* catalog, const char* gpu,
                                 const swr_gemm_problem* problem, char** json);
/* swr_best_attention for a swr_attention_problem_v2. */
SWR_API swr_status swr_best_attention_v2(const swr_catalog* catalog, const char* gpu,
                                         const swr_attention_problem_v2* problem, char** json);

/* Enqueues the best kernel (swr::Attention / swr::Gemm) on `stream` (a CUstream as an integer;
   0 is the legacy default stream) in the calling thread's current CUDA context. `gpu` is the
   name to look up, or null/"" for the device that runs it. Returns once enqueued. */
SWR_API swr_status swr_run_attention(swr_catalog* catalog, const char* gpu,
                                     const swr_attention_problem* problem,
                                     const swr_attention_tensors* tensors, uintptr_t stream);
SWR_API swr_status swr_run_gemm(swr_catalog* catalog, const char* gpu,
                                const swr_gemm_problem* problem, const swr_gemm_tensors* tensors,
                                uintptr_t stream);
/* swr_run_attention for a swr_attention_problem_v2, with the tensors' strides (null: all
   contiguous). */
SWR_API swr_status swr_run_attention_v2(swr_catalog* catalog, const char* gpu,
                                        const swr_attention_problem_v2* problem,
                                        const swr_attention_tensors* tensors,
                                        const swr_attention_strides* strides, uintptr_t stream);

/* A problem's launch decided once, for bindings that call the same shape many times: the
   catalog's choice and the kernel loaded into the calling thread's current CUDA context, so that
   each swr_launch_* costs the driver's launch alone (no lookup, no allocation, no string). Owned
   by its catalog: valid until swr_catalog_close, which frees it; preparing the same problem for
   the same `gpu` in the same context again returns the same handle. Thread-safe. */
typedef struct swr_prepared swr_prepared;

/* Decides and loads what swr_run_attention / swr_run_gemm would (same `gpu` rule, same errors)
   without launching. */
SWR_API swr_status swr_prepare_attention(swr_catalog* catalog, const char* gpu,
                                         const swr_attention_problem* problem,
                                         swr_prepared** prepared);
SWR_API swr_status swr_prepare_gemm(swr_catalog* catalog, const char* gpu,
                                    const swr_gemm_problem* problem, swr_prepared** prepared);
SWR_API swr_status swr_prepare_attention_v2(swr_catalog* catalog, const char* gpu,
                                            const swr_attention_problem_v2* problem,
                                            swr_prepared** prepared);

/* swr_launch_attention's flags: the workspace is 0 already (a counter the caller takes once from
   a pool it clears in stream order), so swr enqueues no clear of it before the kernel, which
   leaves it nonzero. Without it swr clears the caller's workspace first, as swr_run_attention
   does. (A workspace of 0 is one of swr's pooled counters, which it clears itself.) */
#define SWR_WORKSPACE_ZEROED 1u

/* Enqueues a prepared launch on `stream` with the device pointers of swr_attention_tensors /
   swr_gemm_tensors, passed one by one (an FFI call then builds no structure). The context it was
   prepared in must be current on the calling thread (a thread with none gets it made current;
   another one is SWR_ERROR_INVALID_ARGUMENT, as are a handle of the other family, a null pointer
   and an unknown flag). Returns once enqueued. */
SWR_API swr_status swr_launch_attention(const swr_prepared* prepared, uint64_t q, uint64_t k,
                                        uint64_t v, uint64_t o, uint64_t workspace, uint32_t flags,
                                        uintptr_t stream);
SWR_API swr_status swr_launch_gemm(const swr_prepared* prepared, uint64_t a, uint64_t b, uint64_t c,
                                   uintptr_t stream);
/* swr_launch_attention with the tensors' strides (null: all contiguous), checked at each launch
   as swr_run_attention_v2 checks them. */
SWR_API swr_status swr_launch_attention_v2(const swr_prepared* prepared, uint64_t q, uint64_t k,
                                           uint64_t v, uint64_t o,
                                           const swr_attention_strides* strides, uint64_t workspace,
                                           uint32_t flags, uintptr_t stream);

/* swr_launch_attention_v2 that also writes each query row's log-sum-exp to `lse` ([batch, heads,
   seq_q] fp32, contiguous, 4-byte aligned; 0: none, as v2): what the backward needs. */
SWR_API swr_status swr_launch_attention_v3(const swr_prepared* prepared, uint64_t q, uint64_t k,
                                           uint64_t v, uint64_t o, uint64_t lse,
                                           const swr_attention_strides* strides, uint64_t workspace,
                                           uint32_t flags, uintptr_t stream);

/* The attention backward (swr::AttentionBackward): dQ, dK, dV from Q, K, V, the forward's O and
   log-sum-exp, and dO. Backward variants come from a results database or an export (manifest
   version 5). */

/* Element strides, {batch, head, seq, dim} each as swr_attention_strides: Q, K, V, O, dO, dQ, dK,
   dV (K, V, dK, dV with kv_heads heads of seq_kv rows). Four 0s: contiguous. */
typedef struct swr_attention_backward_strides {
  int64_t q[4];
  int64_t k[4];
  int64_t v[4];
  int64_t o[4];
  int64_t d_o[4];
  int64_t dq[4];
  int64_t dk[4];
  int64_t dv[4];
} swr_attention_backward_strides;

/* The backward lookups' flags: only variants whose dQ is the same bit for bit on every run (what
   torch.use_deterministic_algorithms asks); none tuned is "match": "none" /
   SWR_ERROR_KERNEL_REFUSED. */
#define SWR_BACKWARD_DETERMINISTIC 1u

/* swr_best_attention_v2 for the backward of that problem. */
SWR_API swr_status swr_best_attention_backward(const swr_catalog* catalog, const char* gpu,
                                               const swr_attention_problem_v2* problem,
                                               uint32_t flags, char** json);
/* Decides and loads the backward of a problem (as swr_prepare_attention_v2). */
SWR_API swr_status swr_prepare_attention_backward(swr_catalog* catalog, const char* gpu,
                                                  const swr_attention_problem_v2* problem,
                                                  uint32_t flags, swr_prepared** prepared);
/* The workspace (device bytes, 256-byte aligned) a launch of the prepared backward needs. */
SWR_API swr_status swr_attention_backward_workspace_bytes(const swr_prepared* prepared,
                                                          uint64_t* bytes);
/* Enqueues the prepared backward on `stream`: writes dq, dk, dv; fills the caller's workspace
   (at least swr_attention_backward_workspace_bytes; one per launch that may overlap). A workspace
   too small, a null tensor or a layout the kernels cannot read is refused before anything runs. */
SWR_API swr_status swr_launch_attention_backward(const swr_prepared* prepared, uint64_t q,
                                                 uint64_t k, uint64_t v, uint64_t o, uint64_t d_o,
                                                 uint64_t lse, uint64_t dq, uint64_t dk,
                                                 uint64_t dv,
                                                 const swr_attention_backward_strides* strides,
                                                 uint64_t workspace, uint64_t workspace_bytes,
                                                 uintptr_t stream);

/* The name the catalog knows CUDA device `ordinal` by ("h200", as swr_run_* look it up when `gpu`
   is null), as a string to free with swr_string_free: what a caller passes to swr_best_* to
   learn what would run on that device, without launching. */
SWR_API swr_status swr_device_gpu_name(int ordinal, char** name);

/* Frees a string the library returned; null is allowed. */
SWR_API void swr_string_free(char* text);

#ifdef __cplusplus
}
#endif

#endif
