#include "report/gpu_results.hpp"

#include <algorithm>
#include <set>

#include "report/attention_pass.hpp"
#include "swr/usage_error.hpp"

namespace swr::report {

std::vector<const ProblemResults*> GpuResults::of_family(const std::string& family) const {
  std::vector<const ProblemResults*> selected;
  for (const ProblemResults& results : problems) {
    if (results.problem.family == family) selected.push_back(&results);
  }
  return selected;
}

std::vector<std::string> gpus_with_results(const db::ResultsDatabase& database) {
  std::vector<std::string> names;
  for (const db::ProblemSummary& summary : database.problem_summaries()) {
    if (std::find(names.begin(), names.end(), summary.gpu.gpu.name) == names.end()) {
      names.push_back(summary.gpu.gpu.name);
    }
  }
  return names;
}

GpuResults load_gpu_results(const db::ResultsDatabase& database, const std::string& gpu_name) {
  GpuResults results;
  results.name = gpu_name;
  results.records = database.gpus_named(gpu_name);
  std::set<std::int64_t> ids;
  for (const db::StoredGpu& gpu : results.records) ids.insert(raw(gpu.id));
  for (const db::ProblemSummary& summary : database.problem_summaries()) {
    if (ids.count(raw(summary.gpu.id)) == 0) continue;
    results.problems.push_back({summary.problem,
                                database.measurements_for(summary.gpu.id, summary.problem.id),
                                summary.best});
  }
  if (results.problems.empty()) {
    std::string known;
    for (const std::string& name : gpus_with_results(database)) {
      known += (known.empty() ? "" : ", ") + name;
    }
    throw UsageError("no results for GPU '" + gpu_name + "' in " + database.path().string() +
                     ": allowed " + (known.empty() ? "a database with measurements" : known));
  }
  results.profile = find_gpu_profile(gpu_name);
  return results;
}

std::string short_count(long long value) {
  if (value >= (1LL << 20) && value % (1LL << 20) == 0) {
    return std::to_string(value >> 20) + "M";
  }
  if (value >= 1024 && value % 1024 == 0 && value >= 16384) {
    return std::to_string(value >> 10) + "K";
  }
  return std::to_string(value);
}

std::string describe_attention_shape(const AttentionProblem& shape) {
  std::string text = "B";  // appended: GCC 12 warns falsely (-Wrestrict) on "literal" + string
  text.append(std::to_string(shape.batch)).append(" H").append(std::to_string(shape.heads));
  if (shape.kv_head_count() != shape.heads) {
    text.append("/").append(std::to_string(shape.kv_head_count())).append(" K/V");
  }
  text.append(" S").append(short_count(shape.seq_q));
  if (shape.seq_kv != shape.seq_q) text.append("/").append(short_count(shape.seq_kv));
  text.append(" D").append(std::to_string(shape.head_dim)).append(" ");
  text.append(to_string(shape.dtype));
  if (!shape.causal) return text;
  return shape.effective_causal_align() == CausalAlignment::bottom_right
             ? text + " causal bottom-right"
             : text + " causal";
}

std::string describe_problem(const db::StoredProblem& problem) {
  if (problem.attention) {
    // Both passes are stored with the same shape: the tables that list every problem must tell
    // them apart.
    const std::string shape = describe_attention_shape(*problem.attention);
    return problem.family == family_name(AttentionPass::backward) ? shape + " backward" : shape;
  }
  const nlohmann::json& json = problem.json;
  if (problem.family == "gemm" && json.contains("m") && json.contains("n") && json.contains("k")) {
    return std::to_string(json["m"].get<long long>()) + "x" +
           std::to_string(json["n"].get<long long>()) + "x" +
           std::to_string(json["k"].get<long long>()) + " " + json.value("dtype", std::string());
  }
  return problem.key;
}

}  // namespace swr::report
