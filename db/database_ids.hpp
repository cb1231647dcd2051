// Row ids of the results database, as distinct types so that a GPU id cannot be passed where a
// problem id is expected. They are only meaningful within one database file.
#pragma once

#include <cstdint>

namespace swr::db {

enum class GpuId : std::int64_t {};
enum class ProblemId : std::int64_t {};
enum class ConfigId : std::int64_t {};

inline std::int64_t raw(GpuId id) {
  return static_cast<std::int64_t>(id);
}
inline std::int64_t raw(ProblemId id) {
  return static_cast<std::int64_t>(id);
}
inline std::int64_t raw(ConfigId id) {
  return static_cast<std::int64_t>(id);
}

}  // namespace swr::db
