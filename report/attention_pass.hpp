// The two attention passes as the report tells them apart. The L2-misses and throughput charts are
// written once against this: what differs is the database family a pass is stored under, the words
// its titles and file names use, how its config keys name the walk order, and its FLOP count.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "swr/attention_config.hpp"

namespace swr::report {

enum class AttentionPass { forward, backward };

// db::StoredProblem::family of the pass: "attention" or "attention-backward".
const char* family_name(AttentionPass pass);
// "forward" or "backward", for titles.
const char* pass_name(AttentionPass pass);
// Put before a chart's file stem so that the passes' files never collide: "" or "backward_".
const char* stem_prefix(AttentionPass pass);
// The knob the L2 chart compares: the forward walks the K/V tiles of its Q tile ("K/V order"),
// the backward the Q tiles of its K/V tile ("Q walk").
const char* walk_name(AttentionPass pass);
// What the tuner's L2 counters span: the whole forward; only the backward's main kernel.
const char* counted_span(AttentionPass pass);
// The FLOP count behind the TFLOP/s the tuner stores, for captions: FlashAttention's 4·B·H·S²·D,
// the backward's AttentionBackwardProblem::flops factor times that.
std::string flop_count_text(AttentionPass pass);

// The walk order a config key of the pass names; nullopt for a key of neither pass's form.
std::optional<KvOrder> walk_order(AttentionPass pass, const std::string& config_key);

}  // namespace swr::report
