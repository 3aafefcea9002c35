// Context overflow: the default stops with its reason; --context-shift keeps the first
// tokens, drops the oldest half of the rest and goes on, grammar and all.
#include <gtest/gtest.h>

#include "automata/matcher.h"
#include "runtime/generator.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

const LoadedModel& model() {
  static const LoadedModel m = load_model(test_data::shared("models/stories260K").string());
  return m;
}

GenerateOptions options(bool shift, int32_t max_tokens) {
  GenerateOptions o;
  o.prompt = "Once upon a time";  // BOS + 4 tokens
  o.max_tokens = max_tokens;
  o.context_length = 32;
  o.sampling.temperature = 0;
  o.context_shift = shift;
  return o;
}

TEST(ContextShift, ByDefaultAFullContextStopsWithItsReason) {
  const GenerateResult r = generate(model(), options(false, 100));
  EXPECT_EQ(r.stop, StopReason::kContextFull);
  EXPECT_EQ(r.tokens.size(), 32u - 5u + 1u);  // the last chosen token is never run
  EXPECT_EQ(r.context_shifts, 0);
}

TEST(ContextShift, ShiftingGoesOnAndLeavesTheTokensBeforeTheFirstShiftAlone) {
  const GenerateResult plain = generate(model(), options(false, 100));
  const GenerateResult shifted = generate(model(), options(true, 100));
  EXPECT_EQ(shifted.stop, StopReason::kMaxTokens);
  EXPECT_EQ(shifted.tokens.size(), 100u);
  // 100 tokens through a 32-token context: each shift frees about half of it.
  EXPECT_GE(shifted.context_shifts, 4);
  ASSERT_GE(shifted.tokens.size(), plain.tokens.size());
  EXPECT_TRUE(std::equal(plain.tokens.begin(), plain.tokens.end(), shifted.tokens.begin()));
  // Keeping the whole prompt (5 of 32) is a different context after the first shift.
  GenerateOptions keep_all = options(true, 100);
  keep_all.keep = -1;
  const GenerateResult kept = generate(model(), keep_all);
  EXPECT_EQ(kept.tokens.size(), 100u);
  EXPECT_TRUE(std::equal(plain.tokens.begin(), plain.tokens.end(), kept.tokens.begin()));
}

TEST(ContextShift, UnderAGrammarTheOutputIsCompleteBeyondTheContext) {
  // 100 bytes need more tokens than a 32-token context leaves after the prompt.
  auto grammar = GrammarAutomaton::compile(parse_gbnf(R"(root ::= [a-z ]{100} "!")"));
  GenerateOptions o = options(true, 150);
  o.grammar = grammar;
  o.sampling.temperature = 1.0f;
  o.sampling.seed = 11;
  const GenerateResult r = generate(model(), o);
  EXPECT_TRUE(r.complete) << r.text;
  EarleyMatcher fresh(grammar, model().tokenizer->shared_vocabulary());
  EXPECT_TRUE(fresh.accept_bytes(r.text) && fresh.is_accepting()) << r.text;
  EXPECT_GT(r.tokens.size(), 32u - 5u + 1u) << "the output must outgrow the context: " << r.text;
}

TEST(ContextShift, AKeepThatLeavesNoRoomIsAnError) {
  GenerateOptions o = options(true, 100);
  o.prompt = "Once upon a time there was a little girl named Lily and she";
  o.keep = -1;
  EXPECT_THROW(generate(model(), o), std::invalid_argument);
}

}  // namespace
}  // namespace lockstep
