#include "runtime/json_field_reader.hpp"

#include <cmath>
#include <limits>

#include "swr/usage_error.hpp"

namespace swr {
namespace {

std::string shown(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// The first difference of `found` from `expected` below `path`, as "<path> <what>" (empty when
// they are equal).
std::string first_difference(const nlohmann::json& found, const nlohmann::json& expected,
                             const std::string& path, const std::string& why) {
  if (expected.is_object() && found.is_object()) {
    for (const auto& [key, value] : expected.items()) {
      const auto member = found.find(key);
      if (member == found.end()) return path + "." + key + " is missing";
      if (std::string difference = first_difference(*member, value, path + "." + key, why);
          !difference.empty()) {
        return difference;
      }
    }
    for (const auto& [key, value] : found.items()) {
      if (!expected.contains(key)) return path + "." + key + " is not among the fields " + why;
    }
    return {};
  }
  if (expected.is_array() && found.is_array()) {
    if (found.size() != expected.size()) {
      return path + " has " + std::to_string(found.size()) + " elements but " + why + " " +
             std::to_string(expected.size());
    }
    for (std::size_t index = 0; index < expected.size(); ++index) {
      if (std::string difference = first_difference(found[index], expected[index],
                                                    path + "[" + std::to_string(index) + "]", why);
          !difference.empty()) {
        return difference;
      }
    }
    return {};
  }
  if (found == expected) return {};
  return path + " is " + shown(found) + " but " + why + " " + shown(expected);
}

}  // namespace

JsonFieldReader::JsonFieldReader(const nlohmann::json& value, std::string document,
                                 std::string path)
    : value_(value), document_(std::move(document)), path_(std::move(path)) {
  if (!value_.is_object()) {
    throw UsageError(document_ + ": " + (path_.empty() ? "the document" : path_) +
                     " must be a JSON object (got " + shown(value_) + ")");
  }
}

std::string JsonFieldReader::field_path(const char* name) const {
  return path_.empty() ? std::string(name) : path_ + "." + name;
}

void JsonFieldReader::fail(const char* name, const std::string& problem) const {
  throw UsageError(document_ + ": " + field_path(name) + " " + problem);
}

const nlohmann::json& JsonFieldReader::value(const char* name) const {
  const auto it = value_.find(name);
  if (it == value_.end()) fail(name, "is missing");
  return *it;
}

void JsonFieldReader::require_json(const char* name, const nlohmann::json& expected,
                                   const std::string& why) const {
  const std::string difference = first_difference(value(name), expected, field_path(name), why);
  if (!difference.empty()) throw UsageError(document_ + ": " + difference);
}

bool JsonFieldReader::has(const char* name) const {
  return value_.contains(name);
}

JsonFieldReader JsonFieldReader::object(const char* name) const {
  const nlohmann::json& field = value(name);
  if (!field.is_object()) fail(name, "must be a JSON object (got " + shown(field) + ")");
  return JsonFieldReader(field, document_, field_path(name));
}

std::size_t JsonFieldReader::array_size(const char* name) const {
  const nlohmann::json& field = value(name);
  if (!field.is_array()) fail(name, "must be a JSON array (got " + shown(field) + ")");
  return field.size();
}

JsonFieldReader JsonFieldReader::element(const char* array_name, std::size_t index) const {
  const nlohmann::json& item = value(array_name).at(index);
  const std::string path = field_path(array_name) + "[" + std::to_string(index) + "]";
  if (!item.is_object()) {
    throw UsageError(document_ + ": " + path + " must be a JSON object (got " + shown(item) + ")");
  }
  return JsonFieldReader(item, document_, path);
}

std::string JsonFieldReader::text(const char* name) const {
  const nlohmann::json& field = value(name);
  if (!field.is_string() || field.get<std::string>().empty()) {
    fail(name, "must be a non-empty string (got " + shown(field) + ")");
  }
  return field.get<std::string>();
}

std::int64_t JsonFieldReader::integer(const char* name, std::int64_t minimum,
                                      std::int64_t maximum) const {
  const nlohmann::json& field = value(name);
  const bool in_range =
      field.is_number_integer() &&
      (field.is_number_unsigned()
           ? field.get<std::uint64_t>() <= static_cast<std::uint64_t>(maximum) &&
                 static_cast<std::int64_t>(field.get<std::uint64_t>()) >= minimum
           : field.get<std::int64_t>() >= minimum && field.get<std::int64_t>() <= maximum);
  if (!in_range) {
    fail(name, "must be an integer from " + std::to_string(minimum) + " to " +
                   std::to_string(maximum) + " (got " + shown(field) + ")");
  }
  return field.is_number_unsigned() ? static_cast<std::int64_t>(field.get<std::uint64_t>())
                                    : field.get<std::int64_t>();
}

int JsonFieldReader::positive_int(const char* name) const {
  return static_cast<int>(integer(name, 1, std::numeric_limits<int>::max()));
}

bool JsonFieldReader::boolean(const char* name) const {
  const nlohmann::json& field = value(name);
  if (!field.is_boolean()) fail(name, "must be true or false (got " + shown(field) + ")");
  return field.get<bool>();
}

double JsonFieldReader::positive_number(const char* name) const {
  const nlohmann::json& field = value(name);
  if (!field.is_number() || !std::isfinite(field.get<double>()) || field.get<double>() <= 0) {
    fail(name, "must be a positive number (got " + shown(field) + ")");
  }
  return field.get<double>();
}

std::optional<double> JsonFieldReader::optional_number(const char* name) const {
  const nlohmann::json& field = value(name);
  if (field.is_null()) return std::nullopt;
  if (!field.is_number() || !std::isfinite(field.get<double>())) {
    fail(name, "must be a number or null (got " + shown(field) + ")");
  }
  return field.get<double>();
}

std::optional<int> JsonFieldReader::optional_int(const char* name) const {
  if (value(name).is_null()) return std::nullopt;
  return static_cast<int>(integer(name, 0, std::numeric_limits<int>::max()));
}

}  // namespace swr
