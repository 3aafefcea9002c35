// sampler/inspector.cpp — see inspector.h.
#include "sampler/inspector.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace lockstep {

double log_sum_exp(std::span<const float> logits) {
  float max = -std::numeric_limits<float>::infinity();
  for (const float z : logits) max = std::max(max, z);
  if (max == -std::numeric_limits<float>::infinity()) return max;
  double sum = 0;
  for (const float z : logits) sum += std::exp(static_cast<double>(z) - max);
  return max + std::log(sum);
}

namespace {

template <class Get>
std::vector<TokenLogprob> top_of(size_t size, size_t n, double lse, Get get) {
  std::vector<TokenLogprob> all;
  all.reserve(size);
  for (size_t i = 0; i < size; ++i) {
    const auto [id, z] = get(i);
    all.push_back({id, static_cast<double>(z) - lse});
  }
  n = std::min(n, all.size());
  const auto better = [](const TokenLogprob& a, const TokenLogprob& b) {
    return a.logprob > b.logprob || (a.logprob == b.logprob && a.id < b.id);
  };
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), better);
  all.resize(n);
  return all;
}

}  // namespace

std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, size_t n, double lse) {
  return top_of(logits.size(), n, lse, [&](size_t i) { return std::pair{static_cast<int32_t>(i), logits[i]}; });
}

std::vector<TokenLogprob> top_logprobs(const Candidates& c, size_t n, double lse) {
  return top_of(c.data.size(), n, lse, [&](size_t i) { return std::pair{c.data[i].id, c.data[i].logit}; });
}

void fill_step_logprobs(StepLogprobs& step, int32_t chosen, std::span<const float> logits, const Candidates& masked,
                        size_t n) {
  step.id = chosen;
  step.forced = false;
  const double lse = log_sum_exp(logits);
  step.logprob = static_cast<double>(logits[static_cast<size_t>(chosen)]) - lse;
  step.top = top_logprobs(logits, n, lse);
  std::vector<float> z(masked.data.size());
  for (size_t i = 0; i < z.size(); ++i) z[i] = masked.data[i].logit;
  const double masked_lse = log_sum_exp(z);
  step.masked_logprob = -std::numeric_limits<double>::infinity();
  size_t argmax = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[argmax]) argmax = i;
  }
  step.argmax_removed = true;
  for (const auto& t : masked.data) {
    if (t.id == chosen) step.masked_logprob = static_cast<double>(t.logit) - masked_lse;
    if (static_cast<size_t>(t.id) == argmax && t.logit != -std::numeric_limits<float>::infinity()) {
      step.argmax_removed = false;
    }
  }
  step.masked_top = top_logprobs(masked, n, masked_lse);
  // A banned token (-inf after the bias) is not an alternative.
  std::erase_if(step.masked_top, [](const TokenLogprob& t) { return std::isinf(t.logprob); });
}

GenerationStats generation_stats(std::span<const int32_t> tokens, std::span<const StepLogprobs> steps) {
  GenerationStats s;
  s.tokens = tokens.size();
  if (tokens.empty()) return s;
  s.type_token_ratio = static_cast<double>(std::set<int32_t>(tokens.begin(), tokens.end()).size()) /
                       static_cast<double>(tokens.size());
  for (size_t n = 2; n <= 4; ++n) {
    if (tokens.size() < n) continue;
    std::set<std::vector<int32_t>> distinct;
    const size_t total = tokens.size() - n + 1;
    for (size_t i = 0; i < total; ++i) distinct.emplace(tokens.begin() + static_cast<std::ptrdiff_t>(i),
                                                        tokens.begin() + static_cast<std::ptrdiff_t>(i + n));
    s.repeated_ngrams[n - 2] = 1.0 - static_cast<double>(distinct.size()) / static_cast<double>(total);
  }
  size_t removed = 0;
  for (const auto& st : steps) {
    if (st.forced) continue;
    ++s.sampled;
    s.mean_logprob += st.logprob;
    s.mean_masked_logprob += st.masked_logprob;
    removed += st.argmax_removed ? 1 : 0;
  }
  if (s.sampled) {
    s.mean_logprob /= static_cast<double>(s.sampled);
    s.mean_masked_logprob /= static_cast<double>(s.sampled);
    s.argmax_removed_share = static_cast<double>(removed) / static_cast<double>(s.sampled);
  }
  return s;
}

}  // namespace lockstep
