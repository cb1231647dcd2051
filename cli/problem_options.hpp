// The options every problem-taking command shares (--family, --gpu, the attention shape --seq ...
// --causal, the GEMM shape --m --n --k or --size, --dtype, --config), kept as text so that every
// bad value gets the same one-line message, and their conversion into a target of either family.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "generator/kernel_family.hpp"
#include "swr/attention_backward_problem.hpp"
#include "swr/gemm_config.hpp"
#include "swr/gemm_problem.hpp"
#include "tuner/gemm_compilation.hpp"
#include "tuner/variant_compilation.hpp"

namespace swr::cli {

struct GemmOptions {
  std::string family = "attention";  // --family attention|gemm
  std::string m, n, k;               // --m --n --k
  std::string size;                  // --size: m = n = k
  bool sweep = false;                // --sweep: the paper's sizes x strides (tune only)
  std::string sweep_out;             // --sweep-out DIR (default bench/results/gemm-sweep-<gpu>)
};

// --kv-heads H_kv and --causal-align top_left|bottom_right: what every command that names an
// attention shape takes beside --heads and --causal (empty: multi-head, top-left).
struct AttentionHeadOptions {
  std::string kv_heads;
  std::string causal_align;
  bool given() const { return !kv_heads.empty() || !causal_align.empty(); }
};

void add_attention_head_options(CLI::App& command, AttentionHeadOptions& options);

// --db PATH, described as `role` ("Results database", "Target database") with the default location;
// sets `given` when it is on the command line (an empty value is then bad input, not "not given").
CLI::Option* add_database_option(CLI::App& command, std::string& path, bool& given,
                                 const std::string& role = "Results database");
// Sets problem.kv_heads and problem.causal_align from the options (after heads and causal are
// set): UsageError naming the option for a K/V head count that does not divide --heads, an
// unknown alignment, or bottom_right without --causal.
void apply_attention_head_options(const AttentionHeadOptions& options, AttentionProblem& problem);

// The attention problem's options with their defaults (--dtype is the GEMM's element type too),
// shared by every problem-taking command and by query, which registers them with its own help.
struct AttentionProblemOptions {
  std::string seq;
  std::string seq_kv;
  std::string batch = "8";
  std::string heads = "1";
  std::string head_dim = "64";
  std::string dtype = "f16";
  bool causal = false;
  AttentionHeadOptions head_options;  // --kv-heads, --causal-align
};

struct ProblemOptions : AttentionProblemOptions {
  std::string gpu;
  std::vector<std::string> config_keys;  // --config: restrict to these variants
  GemmOptions gemm;                      // --family, --m, --n, --k, --size
};

// Both families' problem options, the same way on every command that takes a problem.
void add_problem_options(CLI::App& command, ProblemOptions& options);
// --family, --m, --n, --k and --size: what names one GEMM shape (every problem-taking command, and
// show and query, which filter by their own attention options).
void add_gemm_shape_options(CLI::App& command, GemmOptions& options);
// --sweep and --sweep-out (tune).
void add_gemm_sweep_options(CLI::App& command, GemmOptions& options);

// Parses a positive integer option value; throws UsageError "bad --name 'text': allowed ...".
int parse_positive(const std::string& text, const std::string& option_name);

// The kernel families --family names (generator/kernel_family.hpp).
enum class Family { attention, attention_backward, gemm };
inline constexpr const char* kFamilyNames = "attention, attention-backward, gemm";
// The family --family names; UsageError for one that does not exist, or GEMM options given
// without --family gemm.
Family parse_family(const GemmOptions& options);
// True for --family gemm (attention-backward), with parse_family's refusals.
bool is_gemm_family(const GemmOptions& options);
bool is_attention_backward_family(const GemmOptions& options);
// The backward problem the attention options name (the forward's shape), checked as
// resolve_target checks it; --config keys are the caller's to check.
AttentionBackwardProblem resolve_backward_problem(const ProblemOptions& options);

// The attention problem that --seq, --seq-kv, --batch, --heads, --head-dim, --dtype, --causal,
// --kv-heads and --causal-align name, every value checked in that order: UsageError naming the
// first bad one.
AttentionProblem parse_attention_problem(const AttentionProblemOptions& options);

// Checks every value (UsageError on the first bad one) before resolving the GPU, so that bad
// input never touches the driver or the disk. "auto" without a device throws NoDeviceError.
Target resolve_target(const ProblemOptions& options);

// The attention shape options given (--seq ... --causal, those not at their default), in that
// order: what --family gemm and --plan refuse.
std::vector<std::string> given_attention_options(const AttentionProblemOptions& options);

// With --family gemm the attention options have no meaning: UsageError naming the first one given
// ("--seq belongs to the attention family: allowed with --family gemm are <allowed>").
void reject_attention_options(const ProblemOptions& options, const std::string& allowed);
// --gpu checked (missing, unknown) without resolving "auto".
void check_gpu_option(const std::string& gpu);
// UsageError "unsupported head dim '<text>': allowed 32, 64, ..." unless a kernel takes it.
void check_head_dim_option(const std::string& text, int head_dim);
DataType parse_dtype_option(const std::string& dtype);

// The one shape --m/--n/--k or --size names, validated. UsageError when both forms or neither are
// given, or for a bad value.
GemmProblem single_gemm_problem(const GemmOptions& options, DataType dtype);
// --config keys as GEMM configs; UsageError for one that is not a GEMM key.
std::vector<GemmConfig> parse_gemm_config_keys(const std::vector<std::string>& keys);

struct GemmSelection {
  GemmTarget target;
  std::vector<GemmConfig> wanted;  // --config, empty: the whole space
};
// A GEMM problem on the named GPU for space, compile and model: refuses the attention options
// (naming what `command` allows), then checks --gpu, --dtype, the shape and --config in that order.
GemmSelection resolve_gemm_selection(const ProblemOptions& options, const std::string& allowed);

}  // namespace swr::cli
