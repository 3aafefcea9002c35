// The sampling chain reproduces the standard worked example (logits 6, 5, 4.5, 3.5, 2, 0).
#include <cmath>
#include <limits>
#include <map>

#include <gtest/gtest.h>

#include "automata/matcher.h"
#include "sampler/sampler.h"

namespace lockstep {
namespace {

const std::vector<float> kLogits = {6.0f, 5.0f, 4.5f, 3.5f, 2.0f, 0.0f};

Candidates run(std::vector<std::unique_ptr<LogitsProcessor>> procs) {
  Candidates c;
  c.assign(kLogits);
  for (auto& p : procs) p->apply(c);
  c.softmax();
  return c;
}

std::vector<std::unique_ptr<LogitsProcessor>> procs_of(std::unique_ptr<LogitsProcessor> p) {
  std::vector<std::unique_ptr<LogitsProcessor>> v;
  v.push_back(std::move(p));
  return v;
}

// The published example renormalizes already-rounded probabilities (e.g. .132 / .939 = .141
// where the exact value is .1402), so its figures hold to within one unit of the third decimal.
constexpr float kPublishedPrecision = 0.001f;

void expect_probs(const Candidates& c, std::vector<float> expected) {
  ASSERT_EQ(c.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(c.data[i].p, expected[i], kPublishedPrecision) << "rank " << i;
  }
}

TEST(Sampler, SoftmaxOfTheWorkedExample) {
  Candidates c = run({});
  expect_probs(c, {0.590f, 0.217f, 0.132f, 0.048f, 0.011f, 0.002f});
}

TEST(Sampler, TemperatureHalf) {
  Candidates c = run(procs_of(make_temperature(0.5f)));
  const float expected[] = {0.839f, 0.114f, 0.042f, 0.006f};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(c.data[i].p, expected[i], kPublishedPrecision);
}

TEST(Sampler, TopK3) { expect_probs(run(procs_of(make_top_k(3))), {0.628f, 0.231f, 0.141f}); }

TEST(Sampler, TopP09KeepsThree) {
  Candidates c = run(procs_of(make_top_p(0.9f)));
  EXPECT_EQ(c.data.size(), 3u);  // .590 + .217 = .807 < .9; the third crosses and stays
  Candidates first = run(procs_of(make_top_p(0.590f)));
  EXPECT_EQ(first.data.size(), 1u);  // .5904 >= .590: the first token alone crosses
  Candidates second = run(procs_of(make_top_p(0.591f)));
  EXPECT_EQ(second.data.size(), 2u);
}

TEST(Sampler, MinP01KeepsThree) {
  Candidates c = run(procs_of(make_min_p(0.1f)));  // threshold .059: .132 stays, .048 goes
  EXPECT_EQ(c.data.size(), 3u);
}

TEST(Sampler, RepetitionPenaltyOnTheFirstToken) {
  auto pen = make_penalties(64, 1.25f, 0.0f, 0.0f);
  pen->accept(0);
  Candidates c = run(procs_of(std::move(pen)));
  EXPECT_EQ(c.data[0].id, 1);
  EXPECT_NEAR(c.data[0].p, 0.370f, kPublishedPrecision);
  EXPECT_EQ(c.data[1].id, 0);
  EXPECT_NEAR(c.data[1].p, 0.303f, kPublishedPrecision);
}

TEST(Sampler, RepetitionPenaltyMultipliesNegativeLogits) {
  auto pen = make_penalties(-1, 2.0f, 0.0f, 0.0f);
  pen->accept(1);
  Candidates c;
  c.assign(std::vector<float>{1.0f, -1.0f});
  pen->apply(c);
  EXPECT_FLOAT_EQ(c.data[1].logit, -2.0f);
}

TEST(Sampler, FrequencyAndPresencePenalties) {
  auto pen = make_penalties(64, 1.0f, 0.5f, 0.25f);
  pen->accept(2);
  pen->accept(2);
  pen->accept(5);
  Candidates c;
  c.assign(kLogits);
  pen->apply(c);
  EXPECT_FLOAT_EQ(c.data[2].logit, 4.5f - 2 * 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(c.data[5].logit, 0.0f - 0.5f - 0.25f);
  EXPECT_FLOAT_EQ(c.data[0].logit, 6.0f);
}

TEST(Sampler, PenaltyWindowForgetsOldTokens) {
  auto pen = make_penalties(2, 2.0f, 0.0f, 0.0f);
  pen->accept(0);
  pen->accept(1);
  pen->accept(2);  // token 0 falls out of the window
  Candidates c;
  c.assign(kLogits);
  pen->apply(c);
  EXPECT_FLOAT_EQ(c.data[0].logit, 6.0f);
  EXPECT_FLOAT_EQ(c.data[1].logit, 2.5f);
}

// Rolling back undoes accepted tokens, and the ones that had slid out of the window slide
// back: the penalties equal those of a processor that never saw the undone tokens.
TEST(Sampler, PenaltiesRollBackExactly) {
  auto rolled = make_penalties(2, 2.0f, 0.5f, 0.25f);
  auto direct = make_penalties(2, 2.0f, 0.5f, 0.25f);
  for (int32_t t : {0, 1, 1}) {
    rolled->accept(t);
    direct->accept(t);
  }
  rolled->accept(2);
  rolled->accept(3);
  rolled->rollback(2);
  Candidates a, b;
  a.assign(kLogits);
  b.assign(kLogits);
  rolled->apply(a);
  direct->apply(b);
  for (size_t i = 0; i < kLogits.size(); ++i) EXPECT_FLOAT_EQ(a.data[i].logit, b.data[i].logit) << i;
  EXPECT_THROW(rolled->rollback(4), std::out_of_range);
}

TEST(Sampler, ChainRollbackMovesTheGrammarBack) {
  auto vocab = std::make_shared<Vocabulary>(std::vector<std::string>{"a", "b", "c"},
                                            std::vector<TokenKind>(3, TokenKind::kText), std::vector<int32_t>{});
  EarleyMatcher m(GrammarAutomaton::compile(parse_gbnf("root ::= \"a\" [bc]*")), vocab);
  SamplerChain chain = make_sampler_chain(SamplerParams{}, &m);
  chain.accept(0);
  chain.accept(1);
  EXPECT_EQ(m.num_steps(), 2u);
  chain.rollback(1);
  EXPECT_EQ(m.num_steps(), 1u);
  chain.accept(2);
  EXPECT_EQ(m.num_steps(), 2u);
}

TEST(Sampler, LogitBiasCanBanATokenAndGreedyFollows) {
  SamplerChain chain;
  chain.add(make_logit_bias({{0, -INFINITY}, {3, 10.0f}}));
  chain.add(make_greedy());
  EXPECT_EQ(chain.sample(kLogits), 3);
}

TEST(Sampler, SeededDrawIsReproducibleAndFollowsTheDistribution) {
  SamplerParams params;
  params.temperature = 1.0f;
  params.top_k = 0;
  params.top_p = 1.0f;
  params.min_p = 0.0f;
  params.seed = 42;
  SamplerChain a = make_sampler_chain(params, nullptr);
  SamplerChain b = make_sampler_chain(params, nullptr);
  std::vector<int> counts(6, 0);
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const int32_t x = a.sample(kLogits);
    ASSERT_EQ(x, b.sample(kLogits));
    ++counts[x];
  }
  const double expected[] = {0.590, 0.217, 0.132, 0.048, 0.011, 0.002};
  for (int i = 0; i < 6; ++i) {
    const double sd = std::sqrt(expected[i] * (1 - expected[i]) / n);
    EXPECT_NEAR(counts[i] / double(n), expected[i], 5 * sd + 1e-4) << "token " << i;
  }
  // reset() reseeds: the same sequence again.
  SamplerChain c = make_sampler_chain(params, nullptr);
  std::vector<int32_t> first;
  for (int i = 0; i < 10; ++i) first.push_back(c.sample(kLogits));
  c.reset();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(c.sample(kLogits), first[i]);
}

TEST(Sampler, ChainOrderAndGreedyAtTemperatureZero) {
  SamplerParams params;
  params.temperature = 0.0f;
  params.repeat_penalty = 1.25f;
  SamplerChain chain = make_sampler_chain(params, nullptr);
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_STREQ(chain.at(0).name(), "penalties");
  EXPECT_STREQ(chain.at(1).name(), "greedy");
  EXPECT_EQ(chain.sample(kLogits), 0);
  chain.accept(0);
  EXPECT_EQ(chain.sample(kLogits), 1);  // 6 / 1.25 = 4.8 < 5

  SamplerParams full;
  full.logit_bias = {{1, 1.0f}};
  full.repeat_penalty = 1.1f;
  EarleyMatcher* no_matcher = nullptr;
  SamplerChain all = make_sampler_chain(full, no_matcher);
  const char* expected[] = {"logit-bias", "penalties", "temperature", "top-k", "top-p", "min-p", "draw"};
  ASSERT_EQ(all.size(), 7u);
  for (size_t i = 0; i < 7; ++i) EXPECT_STREQ(all.at(i).name(), expected[i]);
}

TEST(Sampler, GrammarMaskComesBeforeTemperatureAndTopK) {
  auto vocab = std::make_shared<Vocabulary>(
      std::vector<std::string>{"a", "b", "c", "d", "e", "f"},
      std::vector<TokenKind>(6, TokenKind::kText), std::vector<int32_t>{});
  EarleyMatcher m(GrammarAutomaton::compile(parse_gbnf("root ::= [ef] [a-f]*")), vocab);
  SamplerParams params;
  params.top_k = 1;
  params.seed = 3;
  SamplerChain chain = make_sampler_chain(params, &m);
  ASSERT_STREQ(chain.at(0).name(), "grammar");
  // Top-k 1 after the mask: the best *allowed* token, 'e' (logit 2.0).
  EXPECT_EQ(chain.sample(kLogits), 4);
  chain.accept(4);
  EXPECT_EQ(m.num_steps(), 1u);
  EXPECT_THROW(chain.accept(5 + 1), std::out_of_range);
}

TEST(Sampler, RejectsOutOfRangeParameters) {
  SamplerParams p;
  p.top_p = 0.0f;
  EXPECT_THROW(make_sampler_chain(p, nullptr), std::invalid_argument);
  p = {};
  p.min_p = 1.5f;
  EXPECT_THROW(make_sampler_chain(p, nullptr), std::invalid_argument);
  p = {};
  p.repeat_penalty = 0.0f;
  EXPECT_THROW(make_sampler_chain(p, nullptr), std::invalid_argument);
}

TEST(Sampler, EveryLogitBannedSelectsNothing) {
  const float inf = std::numeric_limits<float>::infinity();
  std::map<int32_t, float> bias;
  for (int32_t id = 0; id < 6; ++id) bias[id] = -inf;
  for (const bool greedy : {true, false}) {
    SamplerChain chain;
    chain.add(make_logit_bias(bias));
    chain.add(make_top_k(3));
    chain.add(make_top_p(0.9f));
    chain.add(make_min_p(0.1f));
    chain.add(greedy ? make_greedy() : make_draw(1));
    EXPECT_EQ(chain.sample(kLogits), -1) << (greedy ? "greedy" : "draw");
  }
  // One token left with a finite logit is chosen.
  bias.erase(4);
  SamplerChain chain;
  chain.add(make_logit_bias(bias));
  chain.add(make_draw(1));
  EXPECT_EQ(chain.sample(kLogits), 4);
}

}  // namespace
}  // namespace lockstep
