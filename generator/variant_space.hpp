// A variant space of either family for one problem on one GPU: the configs the target runs, and
// the ones dropped with why (attention_space.hpp and gemm_space.hpp build them).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace swr {

template <class Config>
struct Pruned {
  Config config;
  std::string reason;  // why it was dropped
};

template <class Config>
struct SpaceOf {
  std::vector<Config> configs;  // runnable, in a stable order
  std::vector<Pruned<Config>> pruned;

  // Keeps `config` where no reason drops it, else records it as pruned with the reason.
  void keep_or_prune(const Config& config, std::string reason) {
    if (reason.empty()) {
      configs.push_back(config);
    } else {
      pruned.push_back({config, std::move(reason)});
    }
  }
};

}  // namespace swr
