// sampler/speculative.h — speculative sampling's acceptance rule and the prompt-lookup draft.
// The model side (draft and target passes) is runtime/speculative.h.
//
// Speculative sampling (Leviathan et al. 2023, "Fast Inference from Transformers via
// Speculative Decoding", ICML; Chen et al. 2023, "Accelerating Large Language Model Decoding
// with Speculative Sampling"): a draft token x drawn from q is accepted with probability
// min(1, p(x)/q(x)); on rejection the token is drawn from normalize(max(0, p − q)). The
// output then has exactly the target's distribution p, whatever q is. p and q are the
// distributions the sampling chain would draw from (SamplerChain::distribution): after the
// grammar mask, penalties, temperature and truncation.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampler/sampler.h"

namespace lockstep {

/// Probability of `id` in a distribution held as candidates (0 when absent). O(size).
double probability_of(const Candidates& dist, int32_t id);

/// Accepts draft token `x` (drawn from `q`) with probability min(1, p(x)/q(x)): true when
/// u · q(x) < p(x), u uniform in [0, 1). A token q cannot draw (q(x) = 0) is accepted
/// when p(x) > 0 (a deterministic draft: q is the point mass on its proposal).
bool speculative_accept(const Candidates& p, const Candidates& q, int32_t x, double u);

/// The token after a rejection: drawn with `u` from normalize(max(0, p − q)); when that is
/// empty (p ≤ q everywhere, possible only by rounding), from p. -1 when p is empty.
int32_t speculative_residual(const Candidates& p, const Candidates& q, double u);

/// The point mass on `id` (the q of a deterministic draft).
Candidates point_mass(int32_t id);

/// Prompt lookup decoding (Saxena 2023, "Prompt Lookup Decoding"; llama.cpp's lookup
/// decoding): the tokens that followed an earlier occurrence of the last `n` tokens of
/// `history` — the most recent occurrence followed by `k` tokens, else the one followed by
/// the most (up to k); empty when they never occurred before. O(|history| · n).
std::vector<int32_t> lookup_ngram_draft(std::span<const int32_t> history, size_t n, size_t k);

}  // namespace lockstep
