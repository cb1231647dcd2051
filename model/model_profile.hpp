// What the L2 model needs from a GPU profile, checked: a profile with zero or absurd sizes is
// refused before any simulation starts (a UsageError naming the value and the allowed range).
#pragma once

#include <cstdint>

#include "swr/gpu_profile.hpp"

namespace swr::model {

// Throws UsageError for an SM count, L2 size, sector size, partition count, miss factor,
// bandwidth or peak rate outside what any real GPU could have.
void validate_model_profile(const GpuProfile& gpu);

// Bytes of L2 that one copy of data read by every SM can occupy: the whole L2, or one partition
// of it when each partition keeps its own copy (sm_90).
std::int64_t usable_l2_bytes(const GpuProfile& gpu);

}  // namespace swr::model
