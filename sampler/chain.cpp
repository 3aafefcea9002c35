// sampler/chain.cpp — the selectors (greedy, draw), the chain, and the standard chain's order
// (see sampler.h and docs/decoding.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "automata/matcher.h"
#include "automata/vocabulary.h"
#include "sampler/sampler.h"

namespace lockstep {

namespace {

class Greedy : public LogitsProcessor {
 public:
  const char* name() const override { return "greedy"; }
  void apply(Candidates& c) override {
    c.selected = -1;
    float best = -std::numeric_limits<float>::infinity();
    for (const auto& t : c.data) {
      if (c.selected < 0 || t.logit > best || (t.logit == best && t.id < c.selected)) {
        best = t.logit;
        c.selected = t.id;
      }
    }
    if (best == -std::numeric_limits<float>::infinity()) c.selected = -1;  // every logit -inf: none allowed
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<Greedy>(*this); }
};

class Draw : public LogitsProcessor {
 public:
  explicit Draw(uint64_t seed) : seed_(seed), rng_(seed) {}
  const char* name() const override { return "draw"; }
  void apply(Candidates& c) override {
    c.selected = -1;
    if (c.data.empty()) return;
    c.softmax();
    // Every logit -inf (e.g. biased away): no token has a probability, none is drawn.
    if (c.data[0].logit == -std::numeric_limits<float>::infinity()) return;
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;  // [0, 1)
    double cum = 0;
    for (const auto& t : c.data) {
      cum += t.p;
      if (u < cum) {
        c.selected = t.id;
        return;
      }
    }
    c.selected = c.data.back().id;  // rounding: u beyond the accumulated mass
  }
  void reset() override { rng_.seed(seed_); }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<Draw>(*this); }

 private:
  uint64_t seed_;
  std::mt19937_64 rng_;
};

}  // namespace

int32_t draw_from(const Candidates& dist, double u) {
  if (dist.data.empty()) return -1;
  double total = 0;
  for (const auto& t : dist.data) total += t.p;
  double cum = 0;
  for (const auto& t : dist.data) {
    cum += t.p;
    if (u * total < cum) return t.id;
  }
  return dist.data.back().id;
}

std::unique_ptr<LogitsProcessor> make_greedy() { return std::make_unique<Greedy>(); }
std::unique_ptr<LogitsProcessor> make_draw(uint64_t seed) { return std::make_unique<Draw>(seed); }

SamplerChain::SamplerChain(const SamplerChain& other) { *this = other; }

SamplerChain& SamplerChain::operator=(const SamplerChain& other) {
  if (this == &other) return *this;
  processors_.clear();
  for (const auto& p : other.processors_) processors_.push_back(p->clone());
  sampling_stage_ = other.sampling_stage_;
  return *this;
}

int32_t SamplerChain::sample(Candidates& c) {
  c.selected = -1;
  for (size_t i = 0; i < processors_.size(); ++i) {
    if (i == sampling_stage_ && observer_) observer_(c);
    processors_[i]->apply(c);
  }
  return c.selected;
}

void SamplerChain::insert_at_sampling_stage(std::unique_ptr<LogitsProcessor> p) {
  const size_t at = std::min(sampling_stage_, processors_.size());
  processors_.insert(processors_.begin() + static_cast<std::ptrdiff_t>(at), std::move(p));
}

void SamplerChain::shape(Candidates& c) {
  const size_t end = std::min(sampling_stage_, processors_.size());
  for (size_t i = 0; i < end; ++i) processors_[i]->apply(c);
}

void SamplerChain::distribution(Candidates& c) {
  c.selected = -1;
  if (processors_.empty()) throw std::invalid_argument("distribution: the chain has no selector");
  const std::string last = processors_.back()->name();
  if (last != "greedy" && last != "draw") {
    throw std::invalid_argument(fmt::format("the chain ends in {}, whose draw depends on its own state: it has no "
                                            "distribution to compare (speculative decoding needs greedy or draw)",
                                            last));
  }
  for (size_t i = 0; i + 1 < processors_.size(); ++i) {
    if (i == sampling_stage_ && observer_) observer_(c);
    processors_[i]->apply(c);
  }
  if (last == "draw") {
    c.softmax();
    if (!c.data.empty() && c.data[0].logit == -std::numeric_limits<float>::infinity()) c.data.clear();
    std::erase_if(c.data, [](const TokenCandidate& t) { return t.p <= 0; });
    return;
  }
  processors_.back()->apply(c);
  const int32_t best = c.selected;
  c.selected = -1;
  float logit = 0;
  for (const auto& t : c.data) {
    if (t.id == best) logit = t.logit;
  }
  c.data.clear();
  if (best >= 0) c.data.push_back({best, logit, 1.0f});
  c.sorted = true;
}

int32_t SamplerChain::sample(std::span<const float> logits) {
  scratch_.assign(logits);
  return sample(scratch_);
}

void SamplerChain::accept(int32_t token) {
  for (auto& p : processors_) p->accept(token);
}

void SamplerChain::accept_context(int32_t token) {
  for (auto& p : processors_) p->accept_context(token);
}

void SamplerChain::rollback(size_t n) {
  for (auto& p : processors_) p->rollback(n);
}

void SamplerChain::reset() {
  for (auto& p : processors_) p->reset();
}

SamplerChain make_sampler_chain(const SamplerParams& s, EarleyMatcher* matcher, const Vocabulary* vocab,
                                std::string healed_prefix) {
  auto check = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
  };
  check(std::isfinite(s.temperature), "temperature must be a finite number");
  check(s.repeat_penalty > 0 && std::isfinite(s.repeat_penalty), "repeat penalty must be > 0");
  check(std::isfinite(s.frequency_penalty), "frequency penalty must be finite");
  check(std::isfinite(s.presence_penalty), "presence penalty must be finite");
  check(s.top_p > 0 && s.top_p <= 1, "top-p must be in (0, 1]");
  check(s.min_p >= 0 && s.min_p <= 1, "min-p must be in [0, 1]");
  check(s.typical_p > 0 && s.typical_p <= 1, "typical-p must be in (0, 1]");
  check(s.epsilon_cutoff >= 0 && s.epsilon_cutoff < 1, "epsilon cutoff must be in [0, 1)");
  check(s.eta_cutoff >= 0 && s.eta_cutoff < 1, "eta cutoff must be in [0, 1)");
  check(s.mirostat >= 0 && s.mirostat <= 2, "mirostat must be 0 (off), 1 or 2");
  SamplerChain chain;
  if (!s.logit_bias.empty()) chain.add(make_logit_bias(s.logit_bias));
  if (s.repeat_penalty != 1.0f || s.frequency_penalty != 0.0f || s.presence_penalty != 0.0f) {
    chain.add(make_penalties(s.penalty_last_n, s.repeat_penalty, s.frequency_penalty,
                             s.presence_penalty));
  }
  if (matcher || !healed_prefix.empty()) chain.add(make_grammar_mask(matcher, vocab, std::move(healed_prefix)));
  chain.begin_sampling_stage();
  if (s.temperature <= 0) {
    chain.add(make_greedy());
    return chain;
  }
  chain.add(make_temperature(s.temperature));
  if (s.mirostat) {
    const size_t n_vocab = vocab ? vocab->size() : matcher ? matcher->vocabulary().size() : 0;
    chain.add(make_mirostat(s.mirostat, s.mirostat_tau, s.mirostat_eta, n_vocab, s.seed));
    return chain;
  }
  if (s.top_k > 0) chain.add(make_top_k(s.top_k));
  if (s.typical_p < 1.0f) chain.add(make_typical(s.typical_p));
  if (s.top_p < 1.0f) chain.add(make_top_p(s.top_p));
  if (s.min_p > 0.0f) chain.add(make_min_p(s.min_p));
  if (s.epsilon_cutoff > 0.0f) chain.add(make_epsilon_cutoff(s.epsilon_cutoff));
  if (s.eta_cutoff > 0.0f) chain.add(make_eta_cutoff(s.eta_cutoff));
  chain.add(make_draw(s.seed));
  return chain;
}

}  // namespace lockstep
