// sampler/inspector.h — log-probabilities of a generation and statistics of its output
// (`generate --logprobs N`, `--stats`).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampler/sampler.h"

namespace lockstep {

struct TokenLogprob {
  int32_t id;
  double logprob;  ///< natural log
};

/// One generated token's log-probabilities (the OpenAI `logprobs.content[i]` shape, with the
/// masked distribution beside the model's).
struct StepLogprobs {
  int32_t id = -1;
  /// Appended by jump-forward without a model choice: no distribution was computed for it
  /// and the fields below are empty / NaN.
  bool forced = false;
  /// log p(id) under the model's own distribution: log-softmax of the raw logits.
  double logprob = 0;
  std::vector<TokenLogprob> top;  ///< the N most likely tokens of that distribution
  /// log p(id) after logit bias, penalties and the grammar mask, renormalized over what they
  /// leave (the distribution the sampling stage receives, before temperature).
  double masked_logprob = 0;
  std::vector<TokenLogprob> masked_top;  ///< the N most likely tokens of that distribution
  /// The model's unconstrained argmax was removed by the shaping stage (the grammar mask or
  /// a ban): the grammar overrode the model here.
  bool argmax_removed = false;
};

/// log Σ exp(z_i) over `logits` (stable: shifted by the maximum); -inf when every one is
/// -inf or the span is empty. O(n).
double log_sum_exp(std::span<const float> logits);

/// The `n` largest logits as log-probabilities (z − `lse`), best first, ties by lower id.
/// O(size · log n).
std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, size_t n, double lse);
/// The same over candidates (ids from the candidates).
std::vector<TokenLogprob> top_logprobs(const Candidates& c, size_t n, double lse);

/// Fills `step` for token `chosen` from the raw `logits`: float[vocab_size] and the
/// candidates the sampling stage received (`masked`), with `n` alternatives each.
void fill_step_logprobs(StepLogprobs& step, int32_t chosen, std::span<const float> logits, const Candidates& masked,
                        size_t n);

/// Statistics of one output (`--stats`).
struct GenerationStats {
  size_t tokens = 0;          ///< generated tokens, forced ones included
  size_t sampled = 0;         ///< of them, chosen from a distribution (not forced)
  double type_token_ratio = 0;  ///< distinct ids / tokens
  /// rep-n (Welleck et al. 2020, "Neural Text Degeneration with Unlikelihood Training"):
  /// 1 − distinct n-grams / n-grams, for n = 2, 3, 4 (0 when there is no n-gram).
  double repeated_ngrams[3] = {0, 0, 0};
  double mean_logprob = 0;    ///< over sampled tokens, model's distribution (nats)
  double mean_masked_logprob = 0;
  /// Share of sampled steps where the grammar mask (or a ban) removed the model's argmax.
  double argmax_removed_share = 0;
};

/// Statistics of `tokens` with their per-step log-probabilities (same length).
GenerationStats generation_stats(std::span<const int32_t> tokens, std::span<const StepLogprobs> steps);

}  // namespace lockstep
