// sampler/beam.h — beam search's bookkeeping: scoring, the step's selection, finished
// hypotheses and when to stop. The model side (a KV cache per beam) is runtime/beam_search.h.
//
// Beam search (as in Hugging Face transformers' BeamSearchScorer): keep the B partial
// sequences with the largest summed log-probability; at each step every beam proposes its
// 2B best next tokens, the 2B best (beam, token) pairs overall are taken in order, an
// end-of-generation token among the first B of them finishes its hypothesis, the others
// continue until B beams run. A finished hypothesis scores sum_logprob / length^α (Wu et al.
// 2016, "Google's Neural Machine Translation System", length normalization), length = its
// generated tokens without the end-of-generation token (at least 1).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "sampler/inspector.h"

namespace lockstep {

class EarleyMatcher;

struct BeamParams {
  int32_t beams = 4;             ///< B >= 1
  float length_penalty = 1.0f;   ///< α: 0 scores by the sum; > 0 favours longer outputs
  /// Stop as soon as B hypotheses are finished (transformers' early_stopping=True); otherwise
  /// stop when no running beam can still beat the worst of the B finished ones: its sum
  /// only falls, so its best score is its sum now at the length that maximizes it — the
  /// budget for α > 0 (transformers' early_stopping="never"), its current one otherwise.
  bool early_stopping = false;
};

/// A beam's next-token candidates: the `k` best tokens by log-probability of the masked,
/// renormalized distribution — `logits`: float[vocab_size] plus `bias` (logit bias), minus
/// what `matcher` disallows (null: nothing), log-softmax over what is left. Fewer than k
/// when fewer are allowed. O(vocab_size + bitmask).
std::vector<TokenLogprob> beam_candidates(std::span<const float> logits, const std::map<int32_t, float>& bias,
                                          EarleyMatcher* matcher, size_t k);

/// sum_logprob / max(length, 1)^α.
double beam_score(double sum_logprob, size_t length, float length_penalty);

/// One step's choice: which beam continues with which token.
struct BeamChoice {
  size_t beam;     ///< index of the running beam it extends
  int32_t token;
  double sum_logprob;  ///< the beam's sum plus this token's log-probability
  bool finishes;   ///< an end-of-generation token: the hypothesis is finished
};

/// The best finished hypotheses, at most B of them (transformers' BeamHypotheses).
class FinishedHypotheses {
 public:
  explicit FinishedHypotheses(const BeamParams& params) : params_(params) {}
  struct Hypothesis {
    std::vector<int32_t> tokens;  ///< the generated tokens, a final end-of-generation id included
    double sum_logprob;
    double score;
    bool complete;  ///< ended by end of generation (or accepted by the grammar at the budget)
  };
  /// Offers a hypothesis of `length` scored tokens; it stays when fewer than B are kept or
  /// it beats the worst one (which then goes).
  void add(std::vector<int32_t> tokens, double sum_logprob, size_t length, bool complete);
  /// True when no running beam can do better (see BeamParams::early_stopping):
  /// `best_running_sum` is the best running beam's sum after `length` generated tokens, and
  /// no hypothesis may grow past `max_length` (the budget).
  bool done(double best_running_sum, size_t length, size_t max_length) const;
  size_t size() const { return kept_.size(); }
  /// Best first.
  std::vector<Hypothesis> sorted() const;

 private:
  BeamParams params_;
  std::vector<Hypothesis> kept_;
};

/// The step's selection: `beams[b]` is running beam b's sum and `candidates[b]` its best
/// 2B next tokens (beam_candidates). Returns the pairs taken, in order of their sums (best
/// first): up to B continuing ones, and the finishing ones that ranked among the first B
/// (`is_eog(token)` decides which finish). Ties go to the lower beam, then the lower id.
std::vector<BeamChoice> select_beams(std::span<const double> sums, std::span<const std::vector<TokenLogprob>> candidates,
                                     size_t beams, const std::function<bool(int32_t)>& is_eog);

}  // namespace lockstep
