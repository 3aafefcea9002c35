// Typical, ε, η and mirostat on the worked example (logits 6, 5, 4.5, 3.5, 2, 0), with the
// figures worked by hand: p ≈ .5904 .2172 .1317 .0485 .0108 .0015, entropy H = 1.1150 nats,
// surprise −log₂ p ≈ 0.760 2.203 2.924 4.367 6.531 9.417 bits.
#include <cmath>
#include <limits>
#include <map>

#include <gtest/gtest.h>

#include "automata/vocabulary.h"
#include "sampler/sampler.h"

namespace lockstep {
namespace {

const std::vector<float> kLogits = {6.0f, 5.0f, 4.5f, 3.5f, 2.0f, 0.0f};

Candidates apply(LogitsProcessor& p) {
  Candidates c;
  c.assign(kLogits);
  p.apply(c);
  return c;
}

std::vector<int32_t> ids(const Candidates& c) {
  std::vector<int32_t> v;
  for (const auto& t : c.data) v.push_back(t.id);
  std::sort(v.begin(), v.end());
  return v;
}

TEST(Truncation, TypicalKeepsTheTokensClosestToTheEntropy) {
  // |−ln p − H|: .588 .412 .912 1.912 3.412 5.412 — the second most probable token is the
  // most typical. Cumulative mass in that order: .2172 (id 1), .8075 (+ id 0), .9393 (+ id 2).
  auto t02 = make_typical(0.2f);
  EXPECT_EQ(ids(apply(*t02)), (std::vector<int32_t>{1}));  // the argmax itself is cut
  auto t05 = make_typical(0.5f);
  EXPECT_EQ(ids(apply(*t05)), (std::vector<int32_t>{0, 1}));
  auto t09 = make_typical(0.9f);
  EXPECT_EQ(ids(apply(*t09)), (std::vector<int32_t>{0, 1, 2}));
  auto off = make_typical(1.0f);
  EXPECT_EQ(apply(*off).data.size(), 6u);
}

TEST(Truncation, EpsilonAndEtaCutoffs) {
  // ε = 0.14 drops p < .14: ids 0, 1 stay (.1317 goes).
  auto eps = make_epsilon_cutoff(0.14f);
  EXPECT_EQ(ids(apply(*eps)), (std::vector<int32_t>{0, 1}));
  // η = min(.14, √.14 · e^−1.1150) = min(.14, .3742 · .3279) = .1227: .1317 stays.
  auto eta = make_eta_cutoff(0.14f);
  EXPECT_EQ(ids(apply(*eta)), (std::vector<int32_t>{0, 1, 2}));
  // ε = 0.02: √.02 · .3279 = .0464 > .02, so η = ε = .02: ids 0-3 stay for both.
  auto eta_small = make_eta_cutoff(0.02f);
  EXPECT_EQ(ids(apply(*eta_small)), (std::vector<int32_t>{0, 1, 2, 3}));
  // The most probable token stays even above every threshold.
  auto all_out = make_epsilon_cutoff(0.9f);
  EXPECT_EQ(ids(apply(*all_out)), (std::vector<int32_t>{0}));
}

TEST(Truncation, MirostatV2CutsBySurpriseAndMovesMu) {
  // τ = 2 bits: μ starts at 4; surprise ≤ 4 keeps ids 0, 1, 2, renormalized over .9393:
  // .6286, .2312, .1402.
  for (uint64_t seed = 0; seed < 8; ++seed) {
    auto m = make_mirostat(2, 2.0f, 0.5f, 6, seed);
    EXPECT_DOUBLE_EQ(mirostat_mu(*m), 4.0);
    Candidates c = apply(*m);
    ASSERT_EQ(c.data.size(), 3u);
    EXPECT_NEAR(c.data[0].p, 0.6286f, 1e-3f);
    EXPECT_NEAR(c.data[1].p, 0.2312f, 1e-3f);
    EXPECT_NEAR(c.data[2].p, 0.1402f, 1e-3f);
    ASSERT_GE(c.selected, 0);
    ASSERT_LE(c.selected, 2);
    // Surprise of the untruncated distribution (Basu et al.'s reference code).
    const double surprise[] = {-std::log2(0.59040), -std::log2(0.21720), -std::log2(0.13174)};
    m->accept(c.selected);
    EXPECT_NEAR(mirostat_mu(*m), 4.0 - 0.5 * (surprise[c.selected] - 2.0), 1e-4);
    // A token the chain did not draw (forced) leaves μ; rollback restores it.
    const double mu = mirostat_mu(*m);
    m->accept(5);
    EXPECT_DOUBLE_EQ(mirostat_mu(*m), mu);
    m->rollback(2);
    EXPECT_DOUBLE_EQ(mirostat_mu(*m), 4.0);
  }
}

TEST(Truncation, MirostatV1EstimatesTheZipfExponent) {
  // Least squares over the 5 consecutive pairs: ŝ = Σ t_i b_i / Σ t_i² = 2.3227 with
  // t_i = ln((i+2)/(i+1)), b_i = ln(p_i / p_{i+1}); ε̂ = 1.3227, N = 6:
  // k = (ε̂ · 2^μ / (1 − 6^−ε̂))^(1/ŝ) = 2.137 at μ = 2 (τ = 1), 2.880 at μ = 3 (τ = 1.5),
  // 7.05 at μ = 6 (τ = 3); rounded: 2, 3, and every token.
  const std::pair<float, size_t> cases[] = {{1.0f, 2}, {1.5f, 3}, {3.0f, 6}};
  for (const auto& [tau, kept] : cases) {
    auto m = make_mirostat(1, tau, 0.1f, 6, 1);
    EXPECT_EQ(apply(*m).data.size(), kept) << "tau " << tau;
  }
  EXPECT_THROW(make_mirostat(3, 5.0f, 0.1f, 6, 1), std::invalid_argument);
  EXPECT_THROW(make_mirostat(2, 0.0f, 0.1f, 6, 1), std::invalid_argument);
}

TEST(Truncation, MirostatHoldsTheSurpriseNearTau) {
  // A Zipf-like distribution over 512 tokens: the mean surprise of the drawn tokens settles
  // near τ for both versions (the point of the method), far below the unconstrained one.
  std::vector<float> logits(512);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = -1.1f * std::log(static_cast<float>(i + 1));
  for (const int version : {1, 2}) {
    auto m = make_mirostat(version, 3.0f, 0.1f, logits.size(), 7);
    double sum = 0;
    const int n = 4000;
    for (int step = 0; step < n; ++step) {
      Candidates c;
      c.assign(logits);
      Candidates full = c;
      full.softmax();
      m->apply(c);
      ASSERT_GE(c.selected, 0);
      for (const auto& t : full.data) {
        if (t.id == c.selected) sum += -std::log2(static_cast<double>(t.p));
      }
      m->accept(c.selected);
    }
    EXPECT_NEAR(sum / n, 3.0, 0.5) << "version " << version;
  }
}

TEST(Truncation, ChainOrderWithEveryProcessor) {
  SamplerParams p;
  p.logit_bias = {{1, 1.0f}};
  p.repeat_penalty = 1.1f;
  p.typical_p = 0.9f;
  p.epsilon_cutoff = 0.001f;
  p.eta_cutoff = 0.001f;
  SamplerChain chain = make_sampler_chain(p, nullptr);
  const std::vector<std::string> expected = {"logit-bias", "penalties", "temperature", "top-k", "typical",
                                             "top-p",      "min-p",     "epsilon",     "eta",   "draw"};
  ASSERT_EQ(chain.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(chain.at(i).name(), expected[i]);
  p.mirostat = 2;
  SamplerChain miro = make_sampler_chain(p, nullptr);
  ASSERT_EQ(miro.size(), 4u);
  EXPECT_STREQ(miro.at(3).name(), "mirostat-v2");
  for (auto bad : {0.0f, 1.5f}) {
    SamplerParams q;
    q.typical_p = bad;
    EXPECT_THROW(make_sampler_chain(q, nullptr), std::invalid_argument);
  }
  SamplerParams q;
  q.eta_cutoff = 1.0f;
  EXPECT_THROW(make_sampler_chain(q, nullptr), std::invalid_argument);
}

TEST(Truncation, TheObserverSeesTheLogitsTheSamplingStageReceives) {
  SamplerParams p;
  p.logit_bias = {{0, -std::numeric_limits<float>::infinity()}};
  p.temperature = 0.5f;
  SamplerChain chain = make_sampler_chain(p, nullptr);
  std::map<int32_t, float> seen;
  chain.set_observer([&](const Candidates& c) {
    for (const auto& t : c.data) seen[t.id] = t.logit;
  });
  chain.sample(kLogits);
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[0], -std::numeric_limits<float>::infinity());  // after the bias
  EXPECT_EQ(seen[1], 5.0f);                                      // before the temperature
}

TEST(Truncation, TokensSpelledFindsEveryTokenWithThoseBytes) {
  Vocabulary v({" Paris", "Paris", " Paris", " Par", "<s>"},
               {TokenKind::kText, TokenKind::kText, TokenKind::kText, TokenKind::kText, TokenKind::kControl}, {});
  EXPECT_EQ(tokens_spelled(v, " Paris"), (std::vector<int32_t>{0, 2}));
  EXPECT_TRUE(tokens_spelled(v, "<s>").empty());  // control tokens have no text
  EXPECT_TRUE(tokens_spelled(v, " Lyon").empty());
}

}  // namespace
}  // namespace lockstep
