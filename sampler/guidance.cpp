// sampler/guidance.cpp — see guidance.h.
#include "sampler/guidance.h"

#include "sampler/inspector.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace lockstep {

void classifier_free_guidance(std::span<float> cond, std::span<const float> uncond, float scale) {
  if (cond.size() != uncond.size()) throw std::invalid_argument("classifier_free_guidance: sizes differ");
  const float s1 = scale - 1.0f;
  for (size_t i = 0; i < cond.size(); ++i) cond[i] += s1 * (cond[i] - uncond[i]);
}

namespace {

class ContrastiveDecoding : public LogitsProcessor {
 public:
  ContrastiveDecoding(const std::vector<float>* amateur, float alpha) : amateur_(amateur), alpha_(alpha) {}
  const char* name() const override { return "contrastive-decoding"; }
  void apply(Candidates& c) override {
    if (c.data.empty()) return;
    const std::vector<float>& a = *amateur_;
    const double amateur_lse = log_sum_exp(a);
    float best = -std::numeric_limits<float>::infinity();
    for (const auto& t : c.data) best = std::max(best, t.logit);
    if (best == -std::numeric_limits<float>::infinity()) return;
    // p_e(x) ≥ α·max p_e  ⇔  z_e(x) ≥ max z_e + ln α (the expert's normalizer cancels).
    const double cut = alpha_ > 0 ? best + std::log(static_cast<double>(alpha_)) : -INFINITY;
    std::erase_if(c.data, [&](const TokenCandidate& t) { return t.logit < cut; });
    // log p_e − log p_a, up to the expert's normalizer (a constant of the step).
    for (auto& t : c.data) {
      const double amateur_logprob = a[static_cast<size_t>(t.id)] - amateur_lse;
      t.logit = static_cast<float>(t.logit - amateur_logprob);
    }
    c.sorted = false;
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<ContrastiveDecoding>(*this); }

 private:
  const std::vector<float>* amateur_;
  float alpha_;
};

}  // namespace

std::unique_ptr<LogitsProcessor> make_contrastive_decoding(const std::vector<float>* amateur, float alpha) {
  if (!amateur) throw std::invalid_argument("contrastive decoding needs the amateur's logits");
  if (!(alpha >= 0 && alpha <= 1)) throw std::invalid_argument("the contrastive plausibility alpha must be in [0, 1]");
  return std::make_unique<ContrastiveDecoding>(amateur, alpha);
}

double contrastive_search_score(double p, std::span<const float> hidden, std::span<const float> context, float alpha) {
  const size_t d = hidden.size();
  double norm_h = 0;
  for (const float v : hidden) norm_h += static_cast<double>(v) * v;
  norm_h = std::sqrt(norm_h);
  double penalty = context.empty() ? 0.0 : -std::numeric_limits<double>::infinity();
  for (size_t row = 0; row + d <= context.size(); row += d) {
    double dot = 0, norm_c = 0;
    for (size_t i = 0; i < d; ++i) {
      dot += static_cast<double>(hidden[i]) * context[row + i];
      norm_c += static_cast<double>(context[row + i]) * context[row + i];
    }
    const double denom = norm_h * std::sqrt(norm_c);
    penalty = std::max(penalty, denom > 0 ? dot / denom : 0.0);
  }
  return (1.0 - alpha) * p - alpha * penalty;
}

}  // namespace lockstep
