// runtime/speculative.h — speculative decoding: a draft proposes K tokens, the target scores
// them all in one multi-position pass, and exact rejection sampling (sampler/speculative.h)
// keeps the output distributed exactly as plain sampling's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "runtime/generator.h"

namespace lockstep {

enum class DraftKind {
  kModel,   ///< another model with the same vocabulary (--draft MODEL)
  kLayers,  ///< the target's first L layers and its classifier (--draft-layers L)
  kLookup,  ///< the continuation of the last n-gram's previous occurrence (--lookup-ngram N)
};

struct SpeculativeOptions {
  DraftKind kind = DraftKind::kLayers;
  std::shared_ptr<const LlamaModel> draft_model;  ///< kModel
  int32_t draft_layers = 1;                       ///< kLayers: 1 <= L <= n_layers
  int32_t ngram = 2;                              ///< kLookup: N >= 1
  int32_t draft_tokens = 4;                       ///< K: tokens proposed per round, >= 1
};

/// Generates like generate(), a round at a time: the draft proposes up to K tokens (each
/// drawn from its own chain's distribution q — the same processors, grammar mask included,
/// on the draft's logits; a lookup proposal is a point mass), the target runs the last
/// accepted token and the K proposals in one pass (InferenceState::forward_all), and each
/// proposal x is accepted with probability min(1, p(x)/q(x)), p the target chain's
/// distribution at that position; the first rejection is replaced by a draw from
/// normalize(max(0, p − q)), and when all are accepted one more token is drawn from p. The
/// output is distributed exactly as generate()'s; at temperature 0 it is generate()'s greedy
/// output token for token (with jump-forward off: speculative decoding proposes forced text
/// like any other). The grammar matcher and penalties advance on accepted tokens only; the
/// draft's matcher and KV cache roll back to the accepted prefix. GenerateResult's
/// draft_tokens, accepted_draft_tokens and target_passes report the acceptance.
/// Throws std::invalid_argument for options it does not support (token healing, context
/// shift, log-probabilities, mirostat), a draft model whose vocabulary size differs, or a
/// parameter out of range; otherwise like generate().
GenerateResult generate_speculative(const LoadedModel& target, const GenerateOptions& options,
                                    const SpeculativeOptions& speculative,
                                    const std::function<void(std::string_view)>& on_text = {});

}  // namespace lockstep
