// sampler/beam.cpp — see beam.h.
#include "sampler/beam.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "automata/matcher.h"
#include "automata/token_bitmask.h"

namespace lockstep {

std::vector<TokenLogprob> beam_candidates(std::span<const float> logits, const std::map<int32_t, float>& bias,
                                          EarleyMatcher* matcher, size_t k) {
  std::vector<float> z(logits.begin(), logits.end());
  for (const auto& [id, b] : bias) {
    if (id >= 0 && static_cast<size_t>(id) < z.size()) z[static_cast<size_t>(id)] += b;
  }
  if (matcher) {
    std::vector<uint32_t> mask(matcher->vocabulary().bitmask_words());
    matcher->fill_next_token_bitmask(mask);
    const TokenBitmask allowed{mask, matcher->vocabulary().size()};
    for (size_t i = 0; i < z.size(); ++i) {
      if (!allowed.test(i)) z[i] = -std::numeric_limits<float>::infinity();
    }
  }
  std::vector<TokenLogprob> top = top_logprobs(z, k, log_sum_exp(z));
  std::erase_if(top, [](const TokenLogprob& t) { return std::isinf(t.logprob); });
  return top;
}

double beam_score(double sum_logprob, size_t length, float length_penalty) {
  return sum_logprob / std::pow(static_cast<double>(std::max<size_t>(length, 1)), length_penalty);
}

void FinishedHypotheses::add(std::vector<int32_t> tokens, double sum_logprob, size_t length, bool complete) {
  const double score = beam_score(sum_logprob, length, params_.length_penalty);
  const size_t b = static_cast<size_t>(params_.beams);
  if (kept_.size() >= b) {
    auto worst = std::min_element(kept_.begin(), kept_.end(),
                                  [](const Hypothesis& x, const Hypothesis& y) { return x.score < y.score; });
    if (score <= worst->score) return;
    kept_.erase(worst);
  }
  kept_.push_back({std::move(tokens), sum_logprob, score, complete});
}

bool FinishedHypotheses::done(double best_running_sum, size_t length, size_t max_length) const {
  if (kept_.size() < static_cast<size_t>(params_.beams)) return false;
  if (params_.early_stopping) return true;
  double worst = std::numeric_limits<double>::infinity();
  for (const auto& h : kept_) worst = std::min(worst, h.score);
  // A running beam's sum only falls, so its best final score is its sum now over the
  // largest length^α it can reach: the budget's when α > 0, the current one otherwise.
  const size_t best_length = params_.length_penalty > 0 ? std::max(length, max_length) : length;
  return worst >= beam_score(best_running_sum, best_length, params_.length_penalty);
}

std::vector<FinishedHypotheses::Hypothesis> FinishedHypotheses::sorted() const {
  std::vector<Hypothesis> v = kept_;
  std::stable_sort(v.begin(), v.end(), [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
  return v;
}

std::vector<BeamChoice> select_beams(std::span<const double> sums, std::span<const std::vector<TokenLogprob>> candidates,
                                     size_t beams, const std::function<bool(int32_t)>& is_eog) {
  std::vector<BeamChoice> all;
  for (size_t b = 0; b < sums.size(); ++b) {
    for (const auto& t : candidates[b]) all.push_back({b, t.id, sums[b] + t.logprob, is_eog(t.id)});
  }
  std::stable_sort(all.begin(), all.end(), [](const BeamChoice& x, const BeamChoice& y) {
    if (x.sum_logprob != y.sum_logprob) return x.sum_logprob > y.sum_logprob;
    return x.beam != y.beam ? x.beam < y.beam : x.token < y.token;
  });
  std::vector<BeamChoice> taken;
  size_t running = 0;
  for (size_t rank = 0; rank < all.size() && running < beams; ++rank) {
    if (all[rank].finishes) {
      if (rank < beams) taken.push_back(all[rank]);  // an ending ranked below B is not kept
      continue;
    }
    taken.push_back(all[rank]);
    ++running;
  }
  return taken;
}

}  // namespace lockstep
