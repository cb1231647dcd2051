// One integer field of a problem's JSON form (AttentionProblem::from_json, GemmProblem::from_json),
// read without nlohmann's get<int>(), which converts a float such as 2e21 (or an integer past
// int's range) with undefined behaviour (found by tests/fuzz/fuzz_json_forms for both families).
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace swr {

// The field `name` of `json` as an int: nlohmann::json's error when it is missing (or `json` is
// not an object), std::invalid_argument naming it when it is not an integer that fits an int.
inline int json_int_field(const nlohmann::json& json, const char* name) {
  const nlohmann::json& value = json.at(name);
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() &&
       value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) ||
      (!value.is_number_unsigned() &&
       (value.get<std::int64_t>() < std::numeric_limits<int>::min() ||
        value.get<std::int64_t>() > std::numeric_limits<int>::max()))) {
    throw std::invalid_argument(std::string("problem field \"") + name +
                                "\" must be an integer that fits an int (got " + value.dump() +
                                ")");
  }
  return static_cast<int>(value.get<std::int64_t>());
}

}  // namespace swr
