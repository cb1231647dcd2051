#include "report/attention_pass.hpp"

#include <cstdio>

#include "generator/kernel_family.hpp"
#include "swr/attention_backward_config.hpp"
#include "swr/attention_backward_problem.hpp"

namespace swr::report {

const char* family_name(AttentionPass pass) {
  return pass == AttentionPass::forward ? kAttentionFamilyName : kAttentionBackwardFamilyName;
}

const char* pass_name(AttentionPass pass) {
  return pass == AttentionPass::forward ? "forward" : "backward";
}

const char* stem_prefix(AttentionPass pass) {
  return pass == AttentionPass::forward ? "" : "backward_";
}

const char* walk_name(AttentionPass pass) {
  return pass == AttentionPass::forward ? "K/V order" : "Q walk";
}

const char* counted_span(AttentionPass pass) {
  return pass == AttentionPass::forward
             ? "the kernel"
             : "the main kernel (the preprocess and postprocess are not counted)";
}

std::string flop_count_text(AttentionPass pass) {
  if (pass == AttentionPass::forward) {
    return "FlashAttention's count: 4·B·H·S²·D, halved for causal";
  }
  char factor[16];
  std::snprintf(factor, sizeof(factor), "%g", kBackwardFlopsFactor);
  return std::string("the backward's count: ") + factor +
         "x the forward's 4·B·H·S²·D, halved for causal";
}

std::optional<KvOrder> walk_order(AttentionPass pass, const std::string& config_key) {
  if (pass == AttentionPass::forward) {
    const std::optional<AttentionConfig> config = AttentionConfig::from_key(config_key);
    return config ? std::optional<KvOrder>(config->order) : std::nullopt;
  }
  const std::optional<AttentionBackwardConfig> config =
      AttentionBackwardConfig::from_key(config_key);
  return config ? std::optional<KvOrder>(config->order) : std::nullopt;
}

}  // namespace swr::report
