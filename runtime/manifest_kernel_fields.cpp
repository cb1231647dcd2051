// The fields every manifest entry shares, whichever its family.
#include <cctype>
#include <limits>
#include <regex>

#include "driver/device_identity.hpp"
#include "runtime/manifest_entries.hpp"

namespace swr {
namespace {

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

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

// A string that may be empty (versions a machine could not report).
std::string any_text(const JsonFieldReader& reader, const char* name) {
  const nlohmann::json& field = reader.value(name);
  if (!field.is_string()) reader.fail(name, "must be a string (got " + field.dump() + ")");
  return field.get<std::string>();
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

}  // namespace

nlohmann::json gpu_json(const db::GpuRecord& gpu) {
  return {{"name", gpu.name},
          {"arch", gpu.arch},
          {"sm_count", gpu.sm_count},
          {"l2_bytes", gpu.l2_bytes},
          {"device_name", gpu.device_name},
          {"driver_version", gpu.driver_version},
          {"cuda_version", gpu.cuda_version}};
}

void require_equal(const JsonFieldReader& reader, const char* name, const std::string& found,
                   const std::string& expected, const std::string& why) {
  if (found != expected) {
    reader.fail(name, "is \"" + found + "\" but " + why + " \"" + expected + "\"");
  }
}

void require_family(const JsonFieldReader& problem, const char* expected) {
  const std::string family = problem.text("family");
  if (family != expected) {
    problem.fail("family", "is \"" + family + "\" in a list of " + expected +
                               " kernels (attention kernels are listed in \"kernels\", GEMM "
                               "kernels in \"gemm_kernels\", attention-backward modules in "
                               "\"backward_kernels\")");
  }
}

DataType read_dtype(const JsonFieldReader& problem) {
  const std::string dtype = problem.text("dtype");
  const std::optional<DataType> type = parse_data_type(dtype);
  if (!type) problem.fail("dtype", "is \"" + dtype + "\" (allowed f16, bf16)");
  return *type;
}

nlohmann::json kernel_base_json(const ExportedKernelBase& kernel) {
  return {{"gpu", gpu_json(kernel.gpu)},
          {"entry", kernel.entry},
          {"block_threads", kernel.block_threads},
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

void read_kernel_base(const JsonFieldReader& kernel, const char* entry, int threads,
                      ExportedKernelBase& into) {
  into.gpu = read_gpu(kernel.object("gpu"));
  into.entry = kernel.text("entry");
  require_equal(kernel, "entry", into.entry, entry, "every kernel of its family has the entry");
  into.block_threads = kernel.positive_int("block_threads");
  require_equal(kernel, "block_threads", std::to_string(into.block_threads),
                std::to_string(threads), "the config's warps make");
  into.dynamic_shared_bytes = static_cast<int>(kernel.integer("dynamic_shared_bytes", 0, kMaxInt));
  into.arch = known_arch(kernel, "arch");
  const JsonFieldReader cubin = kernel.object("cubin");
  into.cubin_file = read_cubin_file(cubin);
  into.cubin_bytes = static_cast<std::uint64_t>(cubin.integer("bytes", 1, std::int64_t{1} << 40));
  into.cubin_sha256 = read_sha256(cubin);
  into.registers = kernel.optional_int("registers");
  into.compiled_source_hash = kernel.text("compiled_source_hash");
  into.toolkit_version = kernel.text("toolkit_version");
  into.measured = read_measured(kernel.object("measured"));
}

}  // namespace swr
