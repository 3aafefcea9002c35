// runtime/contrastive_search.h — contrastive search: each step picks, among the k most
// probable tokens, the one that best trades model confidence against similarity to the
// context (sampler/guidance.h, contrastive_search_score).
#pragma once

#include <functional>
#include <string_view>

#include "runtime/generator.h"

namespace lockstep {

/// Contrastive search (Su et al. 2022): at every step the chain's shaping stage (logit bias,
/// penalties, grammar mask) gives the distribution p; each of its top `options.sampling.top_k`
/// tokens v is run through the model (one single-position pass each, k + 1 passes per step
/// at most) to get its last hidden state h_v; the token chosen maximizes
/// (1 − α)·p(v) − α·max_j cos(h_v, h_j) over the hidden states h_j of the prompt and the
/// output so far. α = `penalty_alpha` in [0, 1]; α = 0 is greedy decoding. The grammar
/// advances on the chosen token only, so the output stays grammatical and (with
/// length-aware closing) complete. No jump-forward. Throws std::invalid_argument for α
/// outside [0, 1], top-k < 1, or options it does not support (token healing, context
/// shift, guidance); otherwise like generate().
GenerateResult contrastive_search(const LoadedModel& model, const GenerateOptions& options, float penalty_alpha,
                                  const std::function<void(std::string_view)>& on_text = {});

}  // namespace lockstep
