#include "tuner/plan_file.hpp"

#include <climits>
#include <cstdint>
#include <map>
#include <set>

#include "runtime/regular_file.hpp"
#include "swr/attention_config.hpp"
#include "swr/usage_error.hpp"

namespace swr {
namespace {

using Json = nlohmann::json;

constexpr int kMaximumDepth = 16;  // a plan is 5 levels deep; deeper is not a plan

const char* const kAttentionFields[] = {"seq",      "seq_kv", "batch",  "heads",        "kv_heads",
                                        "head_dim", "dtype",  "causal", "causal_align", "configs"};
const char* const kGemmFields[] = {"m", "n", "k", "size", "dtype", "configs"};

std::string allowed_list(const char* const* begin, const char* const* end) {
  std::string text;
  for (const char* const* field = begin; field != end; ++field) {
    text += (text.empty() ? "" : ", ") + std::string(*field);
  }
  return text;
}

// Parses JSON, refusing a key given twice in one object and nesting beyond kMaximumDepth (which
// nlohmann would otherwise take: the last of two keys wins without a word).
Json parse_strictly(std::string_view text, const std::string& name) {
  std::vector<std::set<std::string>> keys_per_object;
  const auto check = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (depth > kMaximumDepth) {
      throw UsageError("bad plan '" + name + "': nested deeper than " +
                       std::to_string(kMaximumDepth) +
                       " levels: allowed the form docs/tuning-at-scale.md shows");
    }
    if (event == Json::parse_event_t::object_start) keys_per_object.emplace_back();
    if (event == Json::parse_event_t::object_end && !keys_per_object.empty()) {
      keys_per_object.pop_back();
    }
    if (event == Json::parse_event_t::key && !keys_per_object.empty() &&
        !keys_per_object.back().insert(parsed.get<std::string>()).second) {
      throw UsageError("bad plan '" + name + "': key '" + parsed.get<std::string>() +
                       "' given twice in one object: allowed each key once");
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), check);
  } catch (const Json::exception& error) {
    throw UsageError("bad plan '" + name + "': not JSON (" + error.what() + ")");
  }
}

class PlanReader {
 public:
  explicit PlanReader(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw UsageError("bad plan '" + name_ + "': " + where + ": " + what);
  }

  // A positive integer, a list of them, or a range.
  std::vector<int> integers(const Json& value, const std::string& where) const {
    std::vector<int> values;
    if (value.is_array()) {
      if (value.empty()) fail(where, "an empty list: allowed at least one value");
      for (std::size_t i = 0; i < value.size(); ++i) {
        values.push_back(integer(value[i], where + "[" + std::to_string(i) + "]"));
      }
    } else if (value.is_object()) {
      values = range(value, where);
    } else {
      values.push_back(integer(value, where));
    }
    if (values.size() > kPlanMaxValuesPerField) {
      fail(where, std::to_string(values.size()) + " values: allowed at most " +
                      std::to_string(kPlanMaxValuesPerField));
    }
    return values;
  }

  int integer(const Json& value, const std::string& where) const {
    const std::string allowed =
        "allowed a positive integer (1 to " + std::to_string(INT_MAX) +
        "), a list of them, or a range {\"from\": A, \"to\": B, \"times\": F or \"step\": D}";
    if (value.is_number_unsigned()) {
      const std::uint64_t number = value.get<std::uint64_t>();
      if (number >= 1 && number <= static_cast<std::uint64_t>(INT_MAX)) {
        return static_cast<int>(number);
      }
    }
    fail(where, value.dump() + " is not one: " + allowed);
  }

  // {"from": A, "to": B, "times": F} (A, A·F, A·F², ... up to B) or {"from", "to", "step"}.
  std::vector<int> range(const Json& value, const std::string& where) const {
    for (const auto& [key, item] : value.items()) {
      if (key != "from" && key != "to" && key != "times" && key != "step") {
        fail(where, "unknown range key '" + key + "': allowed from, to, and times or step");
      }
    }
    if (!value.contains("from") || !value.contains("to") ||
        value.contains("times") == value.contains("step")) {
      fail(where, "a range needs from, to, and one of times and step");
    }
    const long long from = integer(value["from"], where + ".from");
    const long long to = integer(value["to"], where + ".to");
    if (to < from)
      fail(where, "to " + std::to_string(to) + " is below from " + std::to_string(from));
    const bool geometric = value.contains("times");
    const long long factor =
        integer(value[geometric ? "times" : "step"], where + (geometric ? ".times" : ".step"));
    if (geometric && factor < 2) fail(where + ".times", "1: allowed 2 or more");
    std::vector<int> values;
    for (long long v = from; v <= to; v = geometric ? v * factor : v + factor) {
      if (values.size() == kPlanMaxValuesPerField) {
        fail(where, "more than " + std::to_string(kPlanMaxValuesPerField) +
                        " values: allowed at most that many");
      }
      values.push_back(static_cast<int>(v));
    }
    return values;
  }

  // One value or a non-empty list of at most `most`, each read by `one(item, where)`.
  template <class T, class One>
  std::vector<T> one_or_list(const Json& value, const std::string& where, std::size_t most,
                             const std::string& allowed, One one) const {
    if (!value.is_array()) return {one(value, where)};
    if (value.empty()) fail(where, "an empty list: allowed at least one value");
    if (value.size() > most) {
      fail(where, "more than " + std::to_string(most) + " values: allowed " + allowed);
    }
    std::vector<T> values;
    for (std::size_t i = 0; i < value.size(); ++i) {
      values.push_back(one(value[i], where + "[" + std::to_string(i) + "]"));
    }
    return values;
  }

  std::vector<bool> booleans(const Json& value, const std::string& where) const {
    return one_or_list<bool>(value, where, 2, "true, false or both",
                             [&](const Json& item, const std::string& at) {
                               if (!item.is_boolean()) {
                                 fail(at, item.dump() + " is not true or false: allowed those");
                               }
                               return item.get<bool>();
                             });
  }

  std::vector<DataType> dtypes(const Json& value, const std::string& where) const {
    return one_or_list<DataType>(
        value, where, 8, "\"f16\", \"bf16\"", [&](const Json& item, const std::string& at) {
          const std::optional<DataType> dtype =
              item.is_string() ? parse_data_type(item.get<std::string>()) : std::nullopt;
          if (!dtype) fail(at, item.dump() + " is not a dtype: allowed \"f16\", \"bf16\"");
          return *dtype;
        });
  }

  std::vector<CausalAlignment> alignments(const Json& value, const std::string& where) const {
    return one_or_list<CausalAlignment>(
        value, where, 2, "\"top_left\", \"bottom_right\"",
        [&](const Json& item, const std::string& at) {
          const std::optional<CausalAlignment> alignment =
              item.is_string() ? parse_causal_alignment(item.get<std::string>()) : std::nullopt;
          if (!alignment) {
            fail(at, item.dump() +
                         " is not a causal alignment: allowed \"top_left\", "
                         "\"bottom_right\"");
          }
          return *alignment;
        });
  }

  std::vector<std::string> config_keys(const Json& value, const std::string& where,
                                       bool gemm) const {
    if (!value.is_array() || value.empty()) {
      fail(where, "allowed a non-empty list of config keys as `swr-tune space` lists them");
    }
    if (value.size() > kPlanMaxProblems) {
      fail(where, std::to_string(value.size()) + " keys: allowed at most " +
                      std::to_string(kPlanMaxProblems));
    }
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const Json& item = value[i];
      const bool known = item.is_string() &&
                         (gemm ? GemmConfig::from_key(item.get<std::string>()).has_value()
                               : AttentionConfig::from_key(item.get<std::string>()).has_value());
      if (!known) {
        fail(where + "[" + std::to_string(i) + "]",
             item.dump() + " is not " + (gemm ? "a GEMM" : "an attention") +
                 " config key: allowed keys as `swr-tune space" + (gemm ? " --family gemm" : "") +
                 "` lists them");
      }
      keys.push_back(item.get<std::string>());
    }
    return keys;
  }

  // The entry's fields, each checked against the family's list.
  void check_fields(const Json& entry, const std::string& where, const char* const* begin,
                    const char* const* end) const {
    if (!entry.is_object()) fail(where, "allowed an object of problem fields");
    for (const auto& [key, item] : entry.items()) {
      bool known = false;
      for (const char* const* field = begin; field != end; ++field) known |= key == *field;
      if (!known) fail(where, "unknown key '" + key + "': allowed " + allowed_list(begin, end));
    }
  }

  // Counts the problems an entry stands for, refusing before they are made when there are too
  // many: the product of its fields' lengths, added to what the plan holds so far.
  void count_problems(std::size_t& total, const std::vector<std::size_t>& lengths,
                      const std::string& where) const {
    std::size_t product = 1;
    for (std::size_t length : lengths) {
      product *= length;
      if (product + total > kPlanMaxProblems) {
        fail(where, "the plan would hold more than " + std::to_string(kPlanMaxProblems) +
                        " problems: allowed at most that many (split it into several plans)");
      }
    }
    total += product;
  }

 private:
  std::string name_;
};

template <class Planned, class Key>
void add_merged(std::vector<Planned>& list, std::map<std::string, std::size_t>& index, Planned item,
                int& repeated, Key key_of) {
  const std::string key = key_of(item.problem);
  const auto [found, inserted] = index.emplace(key, list.size());
  if (inserted) {
    list.push_back(std::move(item));
    return;
  }
  ++repeated;
  Planned& earlier = list[found->second];
  if constexpr (std::is_same_v<Planned, PlannedAttention>) {
    // An entry without configs tunes the whole space: it wins over a restricted one.
    if (earlier.config_keys.empty() || item.config_keys.empty()) {
      earlier.config_keys.clear();
      return;
    }
    for (const std::string& config : item.config_keys) {
      if (std::find(earlier.config_keys.begin(), earlier.config_keys.end(), config) ==
          earlier.config_keys.end())
        earlier.config_keys.push_back(config);
    }
  } else {
    if (earlier.configs.empty() || item.configs.empty()) {
      earlier.configs.clear();
      return;
    }
    for (const GemmConfig& config : item.configs) {
      bool seen = false;
      for (const GemmConfig& other : earlier.configs) seen |= other.key() == config.key();
      if (!seen) earlier.configs.push_back(config);
    }
  }
}

void read_attention(const PlanReader& reader, const Json& entry, const std::string& where,
                    std::size_t& total, TuningPlanFile& plan,
                    std::map<std::string, std::size_t>& index) {
  reader.check_fields(entry, where, std::begin(kAttentionFields), std::end(kAttentionFields));
  if (!entry.contains("seq"))
    reader.fail(where, "missing seq: allowed a positive integer, list or range");
  const std::vector<int> seqs = reader.integers(entry["seq"], where + ".seq");
  const auto integers_or = [&](const char* field, int fallback) {
    return entry.contains(field) ? reader.integers(entry[field], where + "." + field)
                                 : std::vector<int>{fallback};
  };
  const std::vector<int> seq_kvs = integers_or("seq_kv", 0);  // 0: the same as seq
  const std::vector<int> batches = integers_or("batch", 8);
  const std::vector<int> heads = integers_or("heads", 1);
  const std::vector<int> kv_heads = integers_or("kv_heads", 0);  // 0: the same as heads
  const std::vector<int> head_dims = integers_or("head_dim", 64);
  for (std::size_t i = 0; i < head_dims.size(); ++i) {
    if (std::find(std::begin(kSupportedHeadDims), std::end(kSupportedHeadDims), head_dims[i]) ==
        std::end(kSupportedHeadDims)) {
      reader.fail(where + ".head_dim", std::to_string(head_dims[i]) +
                                           " is not supported: allowed " +
                                           supported_head_dims_text());
    }
  }
  const std::vector<DataType> dtypes = entry.contains("dtype")
                                           ? reader.dtypes(entry["dtype"], where + ".dtype")
                                           : std::vector<DataType>{DataType::f16};
  const std::vector<bool> causals = entry.contains("causal")
                                        ? reader.booleans(entry["causal"], where + ".causal")
                                        : std::vector<bool>{false};
  const std::vector<CausalAlignment> alignments =
      entry.contains("causal_align")
          ? reader.alignments(entry["causal_align"], where + ".causal_align")
          : std::vector<CausalAlignment>{CausalAlignment::top_left};
  std::vector<std::string> keys;
  if (entry.contains("configs"))
    keys = reader.config_keys(entry["configs"], where + ".configs", false);
  reader.count_problems(
      total,
      {batches.size(), heads.size(), kv_heads.size(), head_dims.size(), dtypes.size(),
       causals.size(), alignments.size(), seqs.size(), seq_kvs.size()},
      where);

  const auto add = [&](AttentionProblem problem) {
    try {
      problem.validate();
    } catch (const UsageError& error) {
      reader.fail(where, problem.key() + ": " + error.what());
    }
    if (problem.kv_heads == problem.heads) problem.kv_heads = 0;  // one form of multi-head
    add_merged(plan.attention, index, PlannedAttention{problem, keys}, plan.repeated,
               [](const AttentionProblem& p) { return p.key(); });
  };
  for (int batch : batches)
    for (int head_count : heads)
      for (int kv_head_count : kv_heads)
        for (int head_dim : head_dims)
          for (DataType dtype : dtypes)
            for (bool causal : causals)
              for (CausalAlignment alignment : alignments)
                for (int seq : seqs)
                  for (int seq_kv : seq_kvs) {
                    add({batch, head_count, seq, seq_kv == 0 ? seq : seq_kv, head_dim, dtype,
                         causal, kv_head_count, alignment});
                  }
}

void read_gemm(const PlanReader& reader, const Json& entry, const std::string& where,
               std::size_t& total, TuningPlanFile& plan,
               std::map<std::string, std::size_t>& index) {
  reader.check_fields(entry, where, std::begin(kGemmFields), std::end(kGemmFields));
  const bool square = entry.contains("size");
  const bool sides = entry.contains("m") || entry.contains("n") || entry.contains("k");
  if (square == sides) {
    reader.fail(where, "allowed either size (square) or all of m, n and k");
  }
  std::vector<int> ms, ns, ks;
  if (square) {
    ms = reader.integers(entry["size"], where + ".size");
  } else {
    for (const char* side : {"m", "n", "k"}) {
      if (!entry.contains(side))
        reader.fail(where, std::string("missing ") + side + ": allowed m, n and k together");
    }
    ms = reader.integers(entry["m"], where + ".m");
    ns = reader.integers(entry["n"], where + ".n");
    ks = reader.integers(entry["k"], where + ".k");
  }
  const std::vector<DataType> dtypes = entry.contains("dtype")
                                           ? reader.dtypes(entry["dtype"], where + ".dtype")
                                           : std::vector<DataType>{DataType::f16};
  std::vector<GemmConfig> configs;
  if (entry.contains("configs")) {
    for (const std::string& key : reader.config_keys(entry["configs"], where + ".configs", true)) {
      configs.push_back(*GemmConfig::from_key(key));
    }
  }
  reader.count_problems(
      total, {dtypes.size(), ms.size(), square ? 1 : ns.size(), square ? 1 : ks.size()}, where);
  const auto add = [&](const GemmProblem& problem) {
    try {
      problem.validate();
    } catch (const UsageError& error) {
      reader.fail(where, problem.key() + ": " + error.what());
    }
    add_merged(plan.gemm, index, PlannedGemm{problem, configs}, plan.repeated,
               [](const GemmProblem& p) { return p.key(); });
  };
  for (DataType dtype : dtypes) {
    for (int m : ms) {
      if (square) {
        add(GemmProblem{m, m, m, dtype});
        continue;
      }
      for (int n : ns)
        for (int k : ks) add(GemmProblem{m, n, k, dtype});
    }
  }
}

}  // namespace

TuningPlanFile read_plan_file(const std::filesystem::path& path) {
  return parse_plan(read_regular_file(path, kPlanFileMaxBytes, "plan file"), path.string());
}

TuningPlanFile parse_plan(std::string_view text, const std::string& name) {
  const Json document = parse_strictly(text, name);
  const PlanReader reader(name);
  if (!document.is_object())
    reader.fail("the file", "allowed an object with version, attention, gemm");
  for (const auto& [key, value] : document.items()) {
    if (key != "version" && key != "attention" && key != "gemm") {
      reader.fail("the file", "unknown key '" + key + "': allowed version, attention, gemm");
    }
  }
  if (!document.contains("version") || document["version"] != kPlanFileVersion) {
    reader.fail("version", (document.contains("version") ? document["version"].dump() : "missing") +
                               ": allowed " + std::to_string(kPlanFileVersion));
  }
  TuningPlanFile plan;
  std::size_t total = 0;
  std::map<std::string, std::size_t> attention_index, gemm_index;
  for (const char* family : {"attention", "gemm"}) {
    if (!document.contains(family)) continue;
    const Json& entries = document[family];
    if (!entries.is_array()) reader.fail(family, "allowed a list of entries");
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string where = std::string(family) + "[" + std::to_string(i) + "]";
      if (family == std::string("attention")) {
        read_attention(reader, entries[i], where, total, plan, attention_index);
      } else {
        read_gemm(reader, entries[i], where, total, plan, gemm_index);
      }
    }
  }
  if (plan.problem_count() == 0) {
    reader.fail("the file", "no problem: allowed at least one entry in attention or gemm");
  }
  return plan;
}

nlohmann::json plan_to_json(const TuningPlanFile& plan) {
  Json document = {{"version", kPlanFileVersion}};
  for (const PlannedAttention& planned : plan.attention) {
    const AttentionProblem& p = planned.problem;
    Json entry = {{"seq", p.seq_q},         {"seq_kv", p.seq_kv},
                  {"batch", p.batch},       {"heads", p.heads},
                  {"head_dim", p.head_dim}, {"dtype", std::string(to_string(p.dtype))},
                  {"causal", p.causal}};
    if (p.kv_heads != 0) entry["kv_heads"] = p.kv_heads;
    if (p.causal_align != CausalAlignment::top_left)
      entry["causal_align"] = std::string(to_string(p.causal_align));
    if (!planned.config_keys.empty()) entry["configs"] = planned.config_keys;
    document["attention"].push_back(entry);
  }
  for (const PlannedGemm& planned : plan.gemm) {
    const GemmProblem& p = planned.problem;
    Json entry = {{"m", p.m}, {"n", p.n}, {"k", p.k}, {"dtype", std::string(to_string(p.dtype))}};
    for (const GemmConfig& config : planned.configs) entry["configs"].push_back(config.key());
    document["gemm"].push_back(entry);
  }
  return document;
}

}  // namespace swr
