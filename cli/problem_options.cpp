#include "cli/problem_options.hpp"

#include <algorithm>
#include <charconv>
#include <climits>

#include "db/database_location.hpp"
#include "swr/usage_error.hpp"
#include "tuner/gpu_detection.hpp"

namespace swr::cli {

namespace {

void require(const std::string& value, const std::string& option_name, const std::string& allowed) {
  if (value.empty()) throw UsageError("missing " + option_name + ": allowed " + allowed);
}

}  // namespace

void add_problem_options(CLI::App& command, ProblemOptions& options) {
  command.add_option("--gpu", options.gpu, "Target GPU: " + gpu_profile_names())->type_name("NAME");
  command.add_option("--seq", options.seq, "Query sequence length (rows per head)")->type_name("S");
  command.add_option("--seq-kv", options.seq_kv, "Key/value sequence length (default: --seq)")
      ->type_name("S");
  command.add_option("--batch", options.batch, "Batch size")->type_name("B")->capture_default_str();
  command.add_option("--heads", options.heads, "Attention heads")
      ->type_name("H")
      ->capture_default_str();
  command
      .add_option("--head-dim", options.head_dim, "Head dimension: " + supported_head_dims_text())
      ->type_name("D")
      ->capture_default_str();
  command.add_option("--dtype", options.dtype, "Element type: f16, bf16")
      ->type_name("TYPE")
      ->capture_default_str();
  command.add_flag("--causal", options.causal,
                   "Causal mask (query row i sees keys j <= i; see --causal-align)");
  add_attention_head_options(command, options.head_options);
  command
      .add_option("--config", options.config_keys,
                  "Only these variants (config keys as `swr-tune space` lists them, of either "
                  "family); repeatable")
      ->type_name("KEY");
  add_gemm_shape_options(command, options.gemm);
}

void add_attention_head_options(CLI::App& command, AttentionHeadOptions& options) {
  command
      .add_option("--kv-heads", options.kv_heads,
                  "K/V heads, a divisor of --heads (default: --heads; fewer: grouped-query "
                  "attention, 1: multi-query)")
      ->type_name("H_KV");
  command
      .add_option(
          "--causal-align", options.causal_align,
          "Where the causal diagonal lies when --seq-kv differs from --seq: top_left (query "
          "i sees keys j <= i, the default) or bottom_right (j <= i + seq_kv - seq)")
      ->type_name("ALIGN");
}

void apply_attention_head_options(const AttentionHeadOptions& options, AttentionProblem& problem) {
  if (!options.kv_heads.empty()) {
    const int kv_heads = parse_positive(options.kv_heads, "--kv-heads");
    if (problem.heads % kv_heads != 0) {
      throw UsageError("bad --kv-heads '" + options.kv_heads + "': allowed a divisor of --heads " +
                       std::to_string(problem.heads) + " (" + kv_head_counts_text(problem.heads) +
                       ")");
    }
    problem.kv_heads = kv_heads;
  }
  if (!options.causal_align.empty()) {
    const std::optional<CausalAlignment> align = parse_causal_alignment(options.causal_align);
    if (!align) {
      throw UsageError("bad --causal-align '" + options.causal_align +
                       "': allowed top_left, bottom_right");
    }
    if (*align == CausalAlignment::bottom_right && !problem.causal) {
      throw UsageError("--causal-align bottom_right needs --causal: allowed top_left without it");
    }
    problem.causal_align = *align;
  }
}

int parse_positive(const std::string& text, const std::string& option_name) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end || value <= 0 || value > INT_MAX) {
    throw UsageError("bad " + option_name + " '" + text + "': allowed a positive integer (1 to " +
                     std::to_string(INT_MAX) + ")");
  }
  return static_cast<int>(value);
}

AttentionProblem parse_attention_problem(const AttentionProblemOptions& options) {
  AttentionProblem problem;
  problem.seq_q = parse_positive(options.seq, "--seq");
  problem.seq_kv =
      options.seq_kv.empty() ? problem.seq_q : parse_positive(options.seq_kv, "--seq-kv");
  problem.batch = parse_positive(options.batch, "--batch");
  problem.heads = parse_positive(options.heads, "--heads");
  problem.head_dim = parse_positive(options.head_dim, "--head-dim");
  check_head_dim_option(options.head_dim, problem.head_dim);
  problem.dtype = parse_dtype_option(options.dtype);
  problem.causal = options.causal;
  apply_attention_head_options(options.head_options, problem);
  problem.validate();  // whatever else the problem itself refuses (e.g. tensors too large)
  return problem;
}

Target resolve_target(const ProblemOptions& options) {
  check_gpu_option(options.gpu);
  require(options.seq, "--seq", "a positive integer (query rows per head)");

  const AttentionProblem problem = parse_attention_problem(options);

  for (const std::string& key : options.config_keys) {
    if (!AttentionConfig::from_key(key)) {
      throw UsageError("bad --config '" + key +
                       "': allowed a config key as `swr-tune space` lists it, e.g. "
                       "m128n64w8s2-sawtooth-static-groups4");
    }
  }
  return Target{problem, resolve_gpu(options.gpu)};
}

void add_gemm_shape_options(CLI::App& command, GemmOptions& options) {
  command.add_option("--family", options.family, std::string("Kernel family: ") + kFamilyNames)
      ->type_name("NAME")
      ->capture_default_str();
  command.add_option("--m", options.m, "GEMM: rows of A and C")->type_name("M");
  command.add_option("--n", options.n, "GEMM: columns of B and C (a multiple of 8)")
      ->type_name("N");
  command.add_option("--k", options.k, "GEMM: columns of A, rows of B (a multiple of 8)")
      ->type_name("K");
  command.add_option("--size", options.size, "GEMM: square problem, m = n = k = S")->type_name("S");
}

void add_gemm_sweep_options(CLI::App& command, GemmOptions& options) {
  command.add_flag("--sweep", options.sweep,
                   "GEMM: the swizzle sweep of the paper (sizes 512..16384 x strides 0..8192), "
                   "with its tables of best stride, sensitivity and ratio to cuBLAS");
  command
      .add_option("--sweep-out", options.sweep_out,
                  "GEMM sweep: directory for its tables (default bench/results/gemm-sweep-GPU)")
      ->type_name("DIR");
}

Family parse_family(const GemmOptions& options) {
  if (options.family == kGemmFamilyName) return Family::gemm;
  if (options.family != kAttentionFamilyName && options.family != kAttentionBackwardFamilyName) {
    throw UsageError("bad --family '" + options.family + "': allowed " + kFamilyNames);
  }
  const bool gemm_option = !options.m.empty() || !options.n.empty() || !options.k.empty() ||
                           !options.size.empty() || options.sweep || !options.sweep_out.empty();
  if (gemm_option) {
    throw UsageError(
        "--m, --n, --k, --size, --sweep and --sweep-out belong to the GEMM family: allowed with "
        "--family gemm");
  }
  return options.family == kAttentionFamilyName ? Family::attention : Family::attention_backward;
}

bool is_gemm_family(const GemmOptions& options) {
  return parse_family(options) == Family::gemm;
}

bool is_attention_backward_family(const GemmOptions& options) {
  return parse_family(options) == Family::attention_backward;
}

AttentionBackwardProblem resolve_backward_problem(const ProblemOptions& options) {
  check_gpu_option(options.gpu);
  require(options.seq, "--seq", "a positive integer (query rows per head)");
  return {parse_attention_problem(options)};
}

GemmProblem single_gemm_problem(const GemmOptions& options, DataType dtype) {
  GemmProblem problem;
  problem.dtype = dtype;
  if (!options.size.empty()) {
    if (!options.m.empty() || !options.n.empty() || !options.k.empty()) {
      throw UsageError("--size and --m/--n/--k exclude each other: allowed one of them");
    }
    problem.m = problem.n = problem.k = parse_positive(options.size, "--size");
  } else {
    if (options.m.empty() || options.n.empty() || options.k.empty()) {
      throw UsageError("missing GEMM size: allowed --m M --n N --k K, or --size S (square)");
    }
    problem.m = parse_positive(options.m, "--m");
    problem.n = parse_positive(options.n, "--n");
    problem.k = parse_positive(options.k, "--k");
  }
  problem.validate();
  return problem;
}

std::vector<std::string> given_attention_options(const AttentionProblemOptions& options) {
  const AttentionProblemOptions defaults;
  const std::pair<bool, const char*> attention_only[] = {
      {!options.seq.empty(), "--seq"},
      {!options.seq_kv.empty(), "--seq-kv"},
      {options.batch != defaults.batch, "--batch"},
      {options.heads != defaults.heads, "--heads"},
      {options.head_dim != defaults.head_dim, "--head-dim"},
      {options.causal, "--causal"},
      {!options.head_options.kv_heads.empty(), "--kv-heads"},
      {!options.head_options.causal_align.empty(), "--causal-align"},
  };
  std::vector<std::string> given;
  for (const auto& [is_given, option] : attention_only) {
    if (is_given) given.push_back(option);
  }
  return given;
}

void reject_attention_options(const ProblemOptions& options, const std::string& allowed) {
  const std::vector<std::string> given = given_attention_options(options);
  if (!given.empty()) {
    throw UsageError(given.front() +
                     " belongs to the attention family: allowed with --family gemm are " + allowed);
  }
}

void check_gpu_option(const std::string& gpu) {
  require(gpu, "--gpu", gpu_profile_names());
  // "AUTO" is auto too (resolve_gpu's rule): resolving it here would load the driver before the
  // other values are checked.
  if (!is_auto_gpu(gpu) && !find_gpu_profile(gpu)) {
    resolve_gpu(gpu);  // throws the "unknown GPU" UsageError
  }
}

CLI::Option* add_database_option(CLI::App& command, std::string& path, bool& given,
                                 const std::string& role) {
  return command.add_option("--db", path, role + " (" + db::kDatabaseDefaultHelp + ")")
      ->type_name("PATH")
      ->each([&given](const std::string&) { given = true; });
}

void check_head_dim_option(const std::string& text, int head_dim) {
  if (std::find(std::begin(kSupportedHeadDims), std::end(kSupportedHeadDims), head_dim) ==
      std::end(kSupportedHeadDims)) {
    throw UsageError("unsupported head dim '" + text + "': allowed " + supported_head_dims_text());
  }
}

DataType parse_dtype_option(const std::string& dtype) {
  const std::optional<DataType> parsed = parse_data_type(dtype);
  if (!parsed) throw UsageError("unsupported dtype '" + dtype + "': allowed f16, bf16");
  return *parsed;
}

std::vector<GemmConfig> parse_gemm_config_keys(const std::vector<std::string>& keys) {
  std::vector<GemmConfig> configs;
  for (const std::string& key : keys) {
    const std::optional<GemmConfig> config = GemmConfig::from_key(key);
    if (!config) {
      throw UsageError("bad --config '" + key +
                       "': allowed a GEMM config key, e.g. m128n256k32w2x4s4-grid-swzn1792");
    }
    configs.push_back(*config);
  }
  return configs;
}

GemmSelection resolve_gemm_selection(const ProblemOptions& options, const std::string& allowed) {
  reject_attention_options(options, allowed);
  check_gpu_option(options.gpu);
  const DataType dtype = parse_dtype_option(options.dtype);
  const GemmProblem problem = single_gemm_problem(options.gemm, dtype);
  std::vector<GemmConfig> wanted = parse_gemm_config_keys(options.config_keys);
  return {{problem, resolve_gpu(options.gpu)}, std::move(wanted)};
}

}  // namespace swr::cli
