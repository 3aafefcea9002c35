// sampler/guidance.h — guidance on the logits: classifier-free guidance, contrastive decoding
// and contrastive search's score. The second model passes they need are the runtime's
// (runtime/generator.h, runtime/contrastive_search.h).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sampler/sampler.h"

namespace lockstep {

/// Classifier-free guidance for text (Sanchez et al. 2023, "Stay on topic with Classifier-Free
/// Guidance"): cond ← uncond + s·(cond − uncond), computed as cond + (s − 1)·(cond − uncond)
/// so that s = 1 leaves `cond` bit for bit. On raw logits this equals the paper's form on
/// log-probabilities up to a constant per step, which no processor but the repetition
/// penalty sees (and that one keeps its meaning on raw logits). `cond`, `uncond`:
/// float[vocab_size]. Throws std::invalid_argument when the sizes differ.
void classifier_free_guidance(std::span<float> cond, std::span<const float> uncond, float scale);

/// Contrastive decoding (Li et al. 2023, "Contrastive Decoding: Open-ended Text Generation as
/// Optimization", ACL), a processor placed right after the grammar mask: each candidate's
/// logit becomes log p_expert − log p_amateur (the candidates' logits are the expert's;
/// `amateur` points to the amateur's logits of the same step, float[vocab_size], which the
/// caller refreshes before every apply), and candidates with p_expert < α · max p_expert are
/// dropped — the maximum taken over the candidates the grammar left, so the cut never removes
/// every allowed token. α in [0, 1].
std::unique_ptr<LogitsProcessor> make_contrastive_decoding(const std::vector<float>* amateur, float alpha);

/// Contrastive search (Su et al. 2022, "A Contrastive Framework for Neural Text Generation",
/// NeurIPS): the score of a candidate with model probability `p` and last hidden state
/// `hidden` against the context's hidden states `context` (rows of hidden.size() floats):
/// (1 − α)·p − α·max_j cos(hidden, context_j) (the degeneration penalty; 0 without context).
double contrastive_search_score(double p, std::span<const float> hidden, std::span<const float> context, float alpha);

}  // namespace lockstep
