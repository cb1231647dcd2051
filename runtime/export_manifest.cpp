#include "runtime/export_manifest.hpp"

#include <cctype>
#include <fstream>
#include <limits>
#include <regex>

#include "generator/kernel_source.hpp"
#include "runtime/cubin_arch.hpp"
#include "runtime/json_field_reader.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

nlohmann::json gpu_json(const db::GpuRecord& gpu) {
  return {{"name", gpu.name},
          {"arch", gpu.arch},
          {"sm_count", gpu.sm_count},
          {"l2_bytes", gpu.l2_bytes},
          {"device_name", gpu.device_name},
          {"driver_version", gpu.driver_version},
          {"cuda_version", gpu.cuda_version}};
}

nlohmann::json problem_json(const AttentionProblem& problem) {
  return {{"family", "attention"},        {"key", problem.key()},
          {"batch", problem.batch},       {"heads", problem.heads},
          {"seq_q", problem.seq_q},       {"seq_kv", problem.seq_kv},
          {"head_dim", problem.head_dim}, {"dtype", std::string(to_string(problem.dtype))},
          {"causal", problem.causal}};
}

template <class Number>
nlohmann::json optional_json(const std::optional<Number>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json measured_json(const db::MeasurementRecord& record) {
  return {{"status", std::string(to_string(record.status))},
          {"median_ms", optional_json(record.median_ms)},
          {"p95_ms", optional_json(record.p95_ms)},
          {"min_ms", optional_json(record.min_ms)},
          {"timed_runs", optional_json(record.timed_runs)},
          {"tflops", optional_json(record.tflops)},
          {"relative_error", optional_json(record.relative_error)},
          {"l2_sectors_from_tex", optional_json(record.l2_sectors_from_tex)},
          {"l2_sector_misses", optional_json(record.l2_sector_misses)},
          {"l2_hit_rate", optional_json(record.l2_hit_rate)},
          {"dram_read_bytes", optional_json(record.dram_read_bytes)},
          {"dram_write_bytes", optional_json(record.dram_write_bytes)},
          {"observed_intensity", optional_json(record.observed_intensity)},
          {"algorithmic_intensity", optional_json(record.algorithmic_intensity)},
          {"roofline_fraction", optional_json(record.roofline_fraction)},
          {"registers", optional_json(record.registers)},
          {"spill_bytes", optional_json(record.spill_bytes)},
          {"dynamic_shared_bytes", optional_json(record.dynamic_shared_bytes)},
          {"blocks_per_sm", optional_json(record.blocks_per_sm)},
          {"method", record.method},
          {"source_hash", record.source_hash},
          {"toolkit_version", record.toolkit_version},
          {"driver_version", record.driver_version},
          {"measured_at", record.measured_at}};
}

nlohmann::json kernel_json(const ExportedKernel& kernel) {
  return {{"gpu", gpu_json(kernel.gpu)},
          {"problem", problem_json(kernel.problem)},
          {"config_key", kernel.config.key()},
          {"config", kernel.config.to_json()},
          {"entry", kernel.entry},
          {"block_threads", kernel.block_threads},
          {"grid", grid_rule_json(kernel.config.persistence)},
          {"dynamic_shared_bytes", kernel.dynamic_shared_bytes},
          {"arch", kernel.arch},
          {"cubin",
           {{"file", kernel.cubin_file},
            {"bytes", kernel.cubin_bytes},
            {"sha256", kernel.cubin_sha256}}},
          {"registers", optional_json(kernel.registers)},
          {"compiled_source_hash", kernel.compiled_source_hash},
          {"toolkit_version", kernel.toolkit_version},
          {"measured", measured_json(kernel.measured)}};
}

// A string that may be empty (versions a machine could not report).
std::string any_text(const JsonFieldReader& reader, const char* name) {
  const nlohmann::json& field = reader.value(name);
  if (!field.is_string()) reader.fail(name, "must be a string (got " + field.dump() + ")");
  return field.get<std::string>();
}

void require_equal(const JsonFieldReader& reader, const char* name, const std::string& found,
                   const std::string& expected, const std::string& why) {
  if (found != expected) {
    reader.fail(name, "is \"" + found + "\" but " + why + " \"" + expected + "\"");
  }
}

std::string known_arch(const JsonFieldReader& reader, const char* name) {
  const std::string arch = reader.text(name);
  if (!parse_cubin_arch(arch)) {
    reader.fail(name,
                "names an unknown arch \"" + arch + "\" (allowed " + known_cubin_archs() + ")");
  }
  return arch;
}

db::GpuRecord read_gpu(const JsonFieldReader& gpu) {
  db::GpuRecord record;
  record.name = gpu.text("name");
  record.arch = known_arch(gpu, "arch");
  record.sm_count = gpu.positive_int("sm_count");
  record.l2_bytes = gpu.integer("l2_bytes", 1, std::numeric_limits<std::int64_t>::max());
  record.device_name = gpu.text("device_name");
  record.driver_version = any_text(gpu, "driver_version");
  record.cuda_version = any_text(gpu, "cuda_version");
  return record;
}

AttentionProblem read_problem(const JsonFieldReader& problem) {
  const std::string family = problem.text("family");
  if (family != "attention") {
    problem.fail("family", "is \"" + family + "\": this build runs the attention family only");
  }
  AttentionProblem shape;
  shape.batch = problem.positive_int("batch");
  shape.heads = problem.positive_int("heads");
  shape.seq_q = problem.positive_int("seq_q");
  shape.seq_kv = problem.positive_int("seq_kv");
  shape.head_dim = problem.positive_int("head_dim");
  const std::string dtype = problem.text("dtype");
  const std::optional<DataType> type = parse_data_type(dtype);
  if (!type) problem.fail("dtype", "is \"" + dtype + "\" (allowed f16, bf16)");
  shape.dtype = *type;
  shape.causal = problem.boolean("causal");
  try {
    shape.validate();
  } catch (const UsageError& error) {
    problem.fail("head_dim",
                 std::string("and its siblings are not a valid shape: ") + error.what());
  }
  require_equal(problem, "key", problem.text("key"), shape.key(), "its fields make the key");
  return shape;
}

AttentionConfig read_config(const JsonFieldReader& kernel) {
  kernel.object("config");  // an object, or the error names the field
  AttentionConfig config;
  try {
    config = AttentionConfig::from_json(kernel.value("config"));
  } catch (const UsageError& error) {
    kernel.fail("config", std::string("is not a config: ") + error.what());
  }
  require_equal(kernel, "config_key", kernel.text("config_key"), config.key(),
                "the config JSON has the key");
  return config;
}

db::MeasurementRecord read_measured(const JsonFieldReader& measured) {
  db::MeasurementRecord record;
  const std::string status = measured.text("status");
  if (status != "ok") measured.fail("status", "is \"" + status + "\": only valid results export");
  record.status = db::MeasurementStatus::ok;
  record.median_ms = measured.positive_number("median_ms");
  record.p95_ms = measured.optional_number("p95_ms");
  record.min_ms = measured.optional_number("min_ms");
  record.timed_runs = measured.optional_int("timed_runs");
  record.tflops = measured.optional_number("tflops");
  record.relative_error = measured.optional_number("relative_error");
  record.l2_sectors_from_tex = measured.optional_number("l2_sectors_from_tex");
  record.l2_sector_misses = measured.optional_number("l2_sector_misses");
  record.l2_hit_rate = measured.optional_number("l2_hit_rate");
  if (record.l2_hit_rate && (*record.l2_hit_rate < 0 || *record.l2_hit_rate > 1)) {
    measured.fail("l2_hit_rate", "must be a fraction from 0 to 1 (got " +
                                     std::to_string(*record.l2_hit_rate) + ")");
  }
  record.dram_read_bytes = measured.optional_number("dram_read_bytes");
  record.dram_write_bytes = measured.optional_number("dram_write_bytes");
  record.observed_intensity = measured.optional_number("observed_intensity");
  record.algorithmic_intensity = measured.optional_number("algorithmic_intensity");
  record.roofline_fraction = measured.optional_number("roofline_fraction");
  record.registers = measured.optional_int("registers");
  record.spill_bytes = measured.optional_int("spill_bytes");
  record.dynamic_shared_bytes = measured.optional_int("dynamic_shared_bytes");
  record.blocks_per_sm = measured.optional_int("blocks_per_sm");
  measured.object("method");  // an object, or the error names the field
  record.method = measured.value("method");
  record.source_hash = measured.text("source_hash");
  record.toolkit_version = measured.text("toolkit_version");
  record.driver_version = any_text(measured, "driver_version");
  record.measured_at = measured.text("measured_at");
  static const std::regex utc(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)");
  if (!std::regex_match(record.measured_at, utc)) {
    measured.fail("measured_at",
                  "must be UTC as YYYY-MM-DDTHH:MM:SS.mmmZ (got \"" + record.measured_at + "\")");
  }
  return record;
}

// The cubin's name must stay inside the export directory.
std::string read_cubin_file(const JsonFieldReader& cubin) {
  const std::string file = cubin.text("file");
  const bool plain = file.find('/') == std::string::npos && file.find('\\') == std::string::npos &&
                     file != "." && file != ".." && file.size() > 6 &&
                     file.compare(file.size() - 6, 6, ".cubin") == 0;
  if (!plain) cubin.fail("file", "must be a file name ending in .cubin (got \"" + file + "\")");
  return file;
}

std::string read_sha256(const JsonFieldReader& cubin) {
  const std::string digest = cubin.text("sha256");
  bool hex = digest.size() == 64;
  for (char c : digest)
    hex = hex && (std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'));
  if (!hex) cubin.fail("sha256", "must be 64 lowercase hex digits (got \"" + digest + "\")");
  return digest;
}

ExportedKernel read_kernel(const JsonFieldReader& kernel) {
  ExportedKernel exported;
  exported.gpu = read_gpu(kernel.object("gpu"));
  exported.problem = read_problem(kernel.object("problem"));
  exported.config = read_config(kernel);
  exported.entry = kernel.text("entry");
  require_equal(kernel, "entry", exported.entry, kAttentionEntryName,
                "every attention kernel's entry is");
  exported.block_threads = kernel.positive_int("block_threads");
  require_equal(kernel, "block_threads", std::to_string(exported.block_threads),
                std::to_string(exported.config.threads()), "the config's warps make");
  const JsonFieldReader grid = kernel.object("grid");
  require_equal(grid, "rule", grid.text("rule"), grid_rule_name(exported.config.persistence),
                "the config's persistence makes it");
  exported.dynamic_shared_bytes =
      static_cast<int>(kernel.integer("dynamic_shared_bytes", 0, kMaxInt));
  exported.arch = known_arch(kernel, "arch");
  const JsonFieldReader cubin = kernel.object("cubin");
  exported.cubin_file = read_cubin_file(cubin);
  exported.cubin_bytes =
      static_cast<std::uint64_t>(cubin.integer("bytes", 1, std::int64_t{1} << 40));
  exported.cubin_sha256 = read_sha256(cubin);
  exported.registers = kernel.optional_int("registers");
  exported.compiled_source_hash = kernel.text("compiled_source_hash");
  exported.toolkit_version = kernel.text("toolkit_version");
  exported.measured = read_measured(kernel.object("measured"));
  return exported;
}

}  // namespace

std::string grid_rule_name(Persistence persistence) {
  return std::string(to_string(persistence));
}

nlohmann::json grid_rule_json(Persistence persistence) {
  const std::string tiles = "batch * heads * ceil(seq_q / block_m)";
  if (persistence == Persistence::grid) {
    return {{"rule", grid_rule_name(persistence)}, {"ctas", "q_tiles"}, {"q_tiles", tiles}};
  }
  return {{"rule", grid_rule_name(persistence)},
          {"ctas", "min(q_tiles, blocks_per_sm * sm_count)"},
          {"q_tiles", tiles},
          {"blocks_per_sm", "cuOccupancyMaxActiveBlocksPerMultiprocessor at load"},
          {"tile_counter",
           persistence == Persistence::dynamic ? "one int, zeroed before each launch" : "none"}};
}

nlohmann::json manifest_to_json(const ExportManifest& manifest) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const ExportedKernel& kernel : manifest.kernels) kernels.push_back(kernel_json(kernel));
  return {{"format", kManifestFormat},
          {"schema_version", manifest.schema_version},
          {"swr_version", manifest.swr_version},
          {"created_at", manifest.created_at},
          {"gpu", manifest.gpu},
          {"kernels", std::move(kernels)}};
}

ExportManifest manifest_from_json(const nlohmann::json& json, const std::string& document) {
  const JsonFieldReader root(json, document);
  const std::string format = root.text("format");
  if (format != kManifestFormat) {
    root.fail("format", "is \"" + format + "\", not \"" + kManifestFormat + "\"");
  }
  ExportManifest manifest;
  manifest.schema_version = static_cast<int>(root.integer("schema_version", 1, kMaxInt));
  if (manifest.schema_version > kManifestSchemaVersion) {
    root.fail("schema_version", std::to_string(manifest.schema_version) +
                                    " is newer than this build reads (" +
                                    std::to_string(kManifestSchemaVersion) + ")");
  }
  manifest.swr_version = root.text("swr_version");
  manifest.created_at = root.text("created_at");
  manifest.gpu = root.text("gpu");
  const std::size_t count = root.array_size("kernels");
  if (count == 0) root.fail("kernels", "lists no kernel");
  for (std::size_t index = 0; index < count; ++index) {
    manifest.kernels.push_back(read_kernel(root.element("kernels", index)));
  }
  return manifest;
}

ExportManifest read_manifest_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError("cannot read " + file.string() + ": no such file or no permission");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& error) {
    throw UsageError(file.string() + " is not valid JSON (" + error.what() + ")");
  }
  return manifest_from_json(json, file.string());
}

}  // namespace swr
