// `swr-tune report --from-json`: the JSON that `swr-tune show --json` prints (kept in
// bench/results/ as the record of a GPU run) read back into a results database, so that a report
// can be drawn from it on a machine that has only those files. Both forms of `show --json` are
// read: every variant of one shape ("variants") and the best per shape ("best"). Attention
// problems of both passes (the family "attention" or "attention-backward"); GEMM problems are
// counted and left out.
#pragma once

#include <filesystem>
#include <vector>

#include "db/results_database.hpp"

namespace swr::report {

struct ImportCount {
  int measurements = 0;
  int skipped_problems = 0;  // of a family the import cannot add
};

// Reads every file first: throws UsageError naming the file (and writes nothing) when one is not
// a `show --json` document; then records their measurements into `database`.
ImportCount import_show_json(db::ResultsDatabase& database,
                             const std::vector<std::filesystem::path>& files);

}  // namespace swr::report
