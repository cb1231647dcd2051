#include "tuner/tuning/walk_order_twins.hpp"

#include "swr/attention_backward_config.hpp"

namespace swr {
namespace {

KvOrder other(KvOrder order) {
  return order == KvOrder::cyclic ? KvOrder::sawtooth : KvOrder::cyclic;
}

}  // namespace

std::optional<KvOrder> walk_order_of(const std::string& config_key) {
  if (const auto forward = AttentionConfig::from_key(config_key)) return forward->order;
  if (const auto backward = AttentionBackwardConfig::from_key(config_key)) return backward->order;
  return std::nullopt;
}

std::optional<std::string> walk_order_twin(const std::string& config_key) {
  if (auto forward = AttentionConfig::from_key(config_key)) {
    forward->order = other(forward->order);
    return forward->key();
  }
  if (auto backward = AttentionBackwardConfig::from_key(config_key)) {
    backward->order = other(backward->order);
    return backward->key();
  }
  return std::nullopt;
}

}  // namespace swr
