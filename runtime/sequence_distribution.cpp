// runtime/sequence_distribution.cpp — see sequence_distribution.h.
#include "runtime/sequence_distribution.h"

#include <stdexcept>

#include <boost/math/distributions/chi_squared.hpp>
#include <fmt/format.h>

#include "automata/matcher.h"

namespace lockstep {

namespace {

struct Enumerator {
  const LoadedModel& model;
  const Vocabulary& vocab;
  InferenceState& state;
  SamplerChain& chain;
  size_t length, max_outcomes;
  std::map<std::vector<int32_t>, double>& out;
  std::vector<int32_t> prefix;

  // `logits` predict the token after `prefix` at KV position `pos`.
  void walk(std::vector<float> logits, int32_t pos, double prob) {
    Candidates c;
    c.assign(logits);
    chain.distribution(c);
    const std::vector<TokenCandidate> dist = c.data;
    for (const auto& t : dist) {
      prefix.push_back(t.id);
      chain.accept(t.id);
      const double p = prob * t.p;
      if (prefix.size() == length || vocab.is_eog(t.id)) {
        out[prefix] += p;
        if (out.size() > max_outcomes) {
          throw std::invalid_argument(fmt::format("more than {} outcomes: narrow the chain (top-k) or the length",
                                                  max_outcomes));
        }
      } else {
        const auto next = state.forward(t.id, pos);
        walk(std::vector<float>(next.begin(), next.end()), pos + 1, p);
      }
      chain.rollback(1);
      prefix.pop_back();
    }
  }
};

}  // namespace

std::map<std::vector<int32_t>, double> exact_output_distribution(const LoadedModel& model, const GenerateOptions& o,
                                                                 size_t length, size_t max_outcomes) {
  const Tokenizer& tok = *model.tokenizer;
  const std::vector<int32_t> prompt = tok.encode(o.prompt, tok.adds_bos());
  InferenceState state(model.model, o.context_length, o.threads);
  GenerateOptions budgeted = o;
  if (budgeted.max_tokens < 0 || static_cast<size_t>(budgeted.max_tokens) > length) {
    budgeted.max_tokens = static_cast<int32_t>(length);
  }
  auto matcher = make_budgeted_matcher(budgeted, tok, generation_budget(budgeted, prompt.size(), state.context_length()));
  SamplerChain chain = make_sampler_chain(o.sampling, matcher.get(), &tok.vocabulary());
  for (const int32_t id : prompt) chain.accept_context(id);
  const auto logits = state.forward(prompt, 0);
  std::map<std::vector<int32_t>, double> out;
  Enumerator e{model, tok.vocabulary(), state, chain, length, max_outcomes, out, {}};
  e.walk(std::vector<float>(logits.begin(), logits.end()), static_cast<int32_t>(prompt.size()), 1.0);
  return out;
}

ChiSquare chi_square_test(const std::map<std::vector<int32_t>, size_t>& observed,
                          const std::map<std::vector<int32_t>, double>& expected) {
  size_t n = 0;
  for (const auto& [k, c] : observed) n += c;
  ChiSquare r;
  if (n == 0) return r;
  double pooled_expected = 0;
  size_t pooled_observed = 0;
  for (const auto& [k, p] : expected) {
    const double e = p * static_cast<double>(n);
    const auto it = observed.find(k);
    const size_t o = it == observed.end() ? 0 : it->second;
    if (e < 5) {
      pooled_expected += e;
      pooled_observed += o;
      continue;
    }
    r.statistic += (static_cast<double>(o) - e) * (static_cast<double>(o) - e) / e;
    ++r.bins;
  }
  for (const auto& [k, c] : observed) {
    if (!expected.count(k)) pooled_observed += c;  // an outcome plain sampling cannot give
  }
  if (pooled_expected > 0 || pooled_observed > 0) {
    const double e = std::max(pooled_expected, 1e-12);
    r.statistic += (static_cast<double>(pooled_observed) - e) * (static_cast<double>(pooled_observed) - e) / e;
    ++r.bins;
  }
  r.degrees_of_freedom = static_cast<int>(r.bins) - 1;
  if (r.degrees_of_freedom < 1) return r;
  const boost::math::chi_squared dist(r.degrees_of_freedom);
  r.p_value = boost::math::cdf(boost::math::complement(dist, r.statistic));
  return r;
}

}  // namespace lockstep
