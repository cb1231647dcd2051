// Which variants of a tuning run get L2 counters (`--counters all|top|none`). Counters cost far
// more than timing on a short kernel (the range profiler's passes), so a quick tune may skip them:
//   all   every variant is timed and counted in one measurement (the default);
//   none  timing only: every row says skipped_by_policy;
//   top   every variant is timed without counters first; then, per shape, the K fastest valid
//         variants and their walk-order twins (the same config with the other K/V or Q walk, so
//         the winner's L2 explanation stays) are measured again with counters. Measurement rows
//         are never changed: that second measurement is a new row of the variant, which becomes
//         its current one (the newest row of a triple counts, as with --retune); the timing-only
//         row stays as history. A run stopped in either pass resumes: the first pass measures what
//         has no row, the second what the selection still lacks counters for.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "db/records.hpp"

namespace swr {

enum class CountersPolicy { all, top, none };

// How many fastest variants per shape `top` counts when --counters-top is not given.
inline constexpr int kDefaultCountersTop = 5;

std::string_view to_string(CountersPolicy policy);
// nullopt for any other word.
std::optional<CountersPolicy> parse_counters_policy(std::string_view text);
// "bad --counters 'X': allowed all, top or none (...)": the one line of a bad value.
std::string bad_counters_policy_message(std::string_view text);

// The config keys of `current` (a shape's current rows on one GPU) that the top pass measures
// again with counters: the `top` fastest valid ones and their walk-order twins that are valid too,
// less those whose current row has its counters already. In time order, twins after their variant.
std::vector<std::string> configs_needing_counters(const std::vector<db::StoredMeasurement>& current,
                                                  int top);

// The note a skipped row carries: why it has no counters under `policy`.
std::string skipped_counters_note(CountersPolicy policy, int top);

}  // namespace swr
