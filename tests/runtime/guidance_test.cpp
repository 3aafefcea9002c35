// Guidance on the bundled model: CFG with s = 1 is plain sampling, contrastive search with
// α = 0 is greedy, and every method keeps a grammar's output complete.
#include <gtest/gtest.h>

#include "automata/matcher.h"
#include "runtime/contrastive_search.h"
#include "runtime/generator.h"
#include "tests/runtime/prompts.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

const LoadedModel& model() {
  static const LoadedModel m = load_model(test_data::shared("models/stories260K").string());
  return m;
}

TEST(GuidanceRun, CfgWithScaleOneIsPlainSampling) {
  for (const char* prompt : test_prompts::kPrompts) {
    GenerateOptions o;
    o.prompt = prompt;
    o.max_tokens = 48;
    o.sampling.temperature = 0.9f;
    o.sampling.repeat_penalty = 1.2f;  // shift-sensitive: raw logits must come through unchanged
    o.sampling.seed = 42;
    const GenerateResult plain = generate(model(), o);
    o.cfg_scale = 1.0f;
    o.negative_prompt = "The dog was sad";  // a second context runs, and is weighed by 0
    const GenerateResult cfg = generate(model(), o);
    EXPECT_EQ(cfg.tokens, plain.tokens) << prompt;
    o.cfg_scale = 2.0f;
    const GenerateResult steered = generate(model(), o);
    EXPECT_EQ(steered.tokens.size(), 48u);
  }
}

TEST(GuidanceRun, ContrastiveSearchWithAlphaZeroIsGreedy) {
  for (const char* prompt : test_prompts::kPrompts) {
    GenerateOptions o;
    o.prompt = prompt;
    o.max_tokens = 40;
    o.sampling.temperature = 0;
    o.sampling.top_k = 4;
    o.jump_forward = false;
    const GenerateResult greedy = generate(model(), o);
    const GenerateResult cs = contrastive_search(model(), o, 0.0f);
    EXPECT_EQ(cs.tokens, greedy.tokens) << prompt;
  }
}

TEST(GuidanceRun, ContrastiveSearchPenalizesRepetition) {
  // Greedy decoding of the bundled model repeats whole sentences; the degeneration penalty
  // makes the output less repetitive (rep-4: repeated 4-grams).
  GenerateOptions o;
  o.prompt = "Once upon a time";
  o.max_tokens = 200;
  o.sampling.temperature = 0;
  o.sampling.top_k = 4;
  o.jump_forward = false;
  const auto rep4 = [](const std::vector<int32_t>& t) {
    std::set<std::vector<int32_t>> seen;
    for (size_t i = 0; i + 4 <= t.size(); ++i) seen.emplace(t.begin() + static_cast<std::ptrdiff_t>(i), t.begin() + static_cast<std::ptrdiff_t>(i + 4));
    return 1.0 - static_cast<double>(seen.size()) / static_cast<double>(t.size() - 3);
  };
  const GenerateResult greedy = generate(model(), o);
  const GenerateResult cs = contrastive_search(model(), o, 0.6f);
  EXPECT_LT(rep4(cs.tokens), rep4(greedy.tokens)) << cs.text;
}

TEST(GuidanceRun, EveryMethodKeepsTheGrammarsOutputComplete) {
  auto grammar = GrammarAutomaton::compile(parse_gbnf(R"(root ::= "{\"name\": \"" [a-z ]{1,20} "\", \"age\": " [0-9]{1,2} "}")"));
  auto check = [&](const GenerateResult& r, const char* what) {
    EXPECT_TRUE(r.complete) << what << ": " << r.text;
    EarleyMatcher fresh(grammar, model().tokenizer->shared_vocabulary());
    EXPECT_TRUE(fresh.accept_bytes(r.text) && fresh.is_accepting()) << what << ": " << r.text;
  };
  GenerateOptions o;
  o.prompt = "Once upon a time";
  o.max_tokens = 48;
  o.grammar = grammar;
  o.sampling.seed = 3;
  o.cfg_scale = 3.0f;
  check(generate(model(), o), "cfg");
  o.cfg_scale = 1.0f;
  o.contrast_model = model().model;  // the model against itself: every score is ~0, the cut still applies
  o.contrast_alpha = 0.1f;
  check(generate(model(), o), "contrastive decoding");
  o.contrast_model = nullptr;
  o.sampling.top_k = 4;
  check(contrastive_search(model(), o, 0.6f), "contrastive search");
}

}  // namespace
}  // namespace lockstep
