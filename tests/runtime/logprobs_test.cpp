// --logprobs and --stats: the reported log-probabilities are the model's own, checked against
// a separate forward pass; the statistics against hand-counted examples.
#include <cmath>

#include <gtest/gtest.h>

#include "runtime/generator.h"
#include "sampler/inspector.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

const LoadedModel& model() {
  static const LoadedModel m = load_model(test_data::shared("models/stories260K").string());
  return m;
}

// log p(tokens | prompt) by a forward pass of its own, one token at a time.
double sequence_logprob(const std::string& prompt, const std::vector<int32_t>& tokens) {
  const Tokenizer& tok = *model().tokenizer;
  std::vector<int32_t> ids = tok.encode(prompt, tok.adds_bos());
  InferenceState state(model().model);
  std::vector<float> logits;
  int32_t pos = 0;
  for (const int32_t id : ids) {
    const auto out = state.forward(id, pos++);
    logits.assign(out.begin(), out.end());
  }
  double sum = 0;
  for (const int32_t id : tokens) {
    double max = logits[0];
    for (const float z : logits) max = std::max<double>(max, z);
    double s = 0;
    for (const float z : logits) s += std::exp(z - max);
    sum += logits[static_cast<size_t>(id)] - max - std::log(s);
    const auto out = state.forward(id, pos++);
    logits.assign(out.begin(), out.end());
  }
  return sum;
}

TEST(Logprobs, GreedySumEqualsTheSequenceLogprobOfASeparatePass) {
  const char* prompts[] = {"Once upon a time", "The cat", "Lily and Ben went to the park", "One day", "Tom had a"};
  for (const char* prompt : prompts) {
    GenerateOptions opt;
    opt.prompt = prompt;
    opt.max_tokens = 48;
    opt.sampling.temperature = 0;
    opt.logprobs = 3;
    const GenerateResult r = generate(model(), opt);
    ASSERT_EQ(r.logprobs.size(), r.tokens.size());
    double sum = 0;
    for (size_t i = 0; i < r.tokens.size(); ++i) {
      const StepLogprobs& s = r.logprobs[i];
      EXPECT_EQ(s.id, r.tokens[i]);
      EXPECT_FALSE(s.forced);
      ASSERT_EQ(s.top.size(), 3u);
      EXPECT_EQ(s.top[0].id, s.id);  // greedy chose the most likely token
      EXPECT_GE(s.top[0].logprob, s.top[1].logprob);
      EXPECT_DOUBLE_EQ(s.masked_logprob, s.logprob);  // nothing shaped the logits
      sum += s.logprob;
    }
    EXPECT_NEAR(sum, sequence_logprob(prompt, r.tokens), 1e-4) << prompt;
  }
}

TEST(Logprobs, UnderAGrammarTheMaskedDistributionIsRenormalizedOverTheAllowedTokens) {
  GenerateOptions opt;
  opt.prompt = "Once upon a time";
  opt.max_tokens = 40;
  opt.sampling.seed = 5;
  opt.logprobs = 5;
  opt.grammar = GrammarAutomaton::compile(parse_gbnf(R"(root ::= "yes" | "no" | [a-z]+ "!")"));
  const GenerateResult r = generate(model(), opt);
  ASSERT_EQ(r.logprobs.size(), r.tokens.size());
  size_t removed = 0;
  for (const StepLogprobs& s : r.logprobs) {
    if (s.forced) {
      EXPECT_TRUE(std::isnan(s.logprob));
      continue;
    }
    // Renormalizing over a subset raises every log-probability.
    EXPECT_GE(s.masked_logprob, s.logprob - 1e-9);
    double mass = 0;
    for (const auto& t : s.masked_top) mass += std::exp(t.logprob);
    EXPECT_LE(mass, 1 + 1e-6);
    removed += s.argmax_removed;
  }
  // The prompt asks for a story; the grammar for a word: it overrode the model at least once.
  EXPECT_GT(removed, 0u);
  const GenerationStats st = generation_stats(r.tokens, r.logprobs);
  EXPECT_EQ(st.tokens, r.tokens.size());
  EXPECT_GT(st.argmax_removed_share, 0);
  EXPECT_GE(st.mean_masked_logprob, st.mean_logprob);
}

TEST(Logprobs, StatisticsOfAHandCountedSequence) {
  // 1 2 1 2 1 3: 3 distinct of 6 tokens; 2-grams 12 21 12 21 13: 3 distinct of 5 → rep-2 0.4;
  // 3-grams 121 212 121 213: 3 of 4 → 0.25; 4-grams 1212 2121 1213: 0.
  const std::vector<int32_t> tokens = {1, 2, 1, 2, 1, 3};
  std::vector<StepLogprobs> steps(6);
  for (size_t i = 0; i < 6; ++i) {
    steps[i].id = tokens[i];
    steps[i].logprob = -1.0 * static_cast<double>(i);
    steps[i].masked_logprob = -0.5;
    steps[i].argmax_removed = i == 2;
  }
  steps[5].forced = true;
  const GenerationStats s = generation_stats(tokens, steps);
  EXPECT_DOUBLE_EQ(s.type_token_ratio, 0.5);
  EXPECT_NEAR(s.repeated_ngrams[0], 0.4, 1e-12);
  EXPECT_NEAR(s.repeated_ngrams[1], 0.25, 1e-12);
  EXPECT_NEAR(s.repeated_ngrams[2], 0.0, 1e-12);
  EXPECT_EQ(s.sampled, 5u);
  EXPECT_DOUBLE_EQ(s.mean_logprob, -2.0);  // (0 + 1 + 2 + 3 + 4) / 5, the forced one left out
  EXPECT_DOUBLE_EQ(s.argmax_removed_share, 0.2);
}

}  // namespace
}  // namespace lockstep
