// Speculative decoding: the acceptance rule by hand, greedy output unchanged by every draft
// kind on twenty prompts (and under json.gbnf), and sampled outputs distributed as plain
// sampling's (chi-square against the exact distribution of the first three tokens).
#include <filesystem>

#include <gtest/gtest.h>

#include "automata/matcher.h"
#include "runtime/sequence_distribution.h"
#include "runtime/speculative.h"
#include "sampler/speculative.h"
#include "tests/runtime/prompts.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

const LoadedModel& model() {
  static const LoadedModel m = load_model(test_data::shared("models/stories260K").string());
  return m;
}

// The bundled model converted to Q8_0: another model file with the same vocabulary.
std::shared_ptr<const LlamaModel> q8_draft() {
  static const std::shared_ptr<const LlamaModel> draft = [] {
    const auto path = std::filesystem::temp_directory_path() / ("lockstep_q8_draft." + std::to_string(::getpid()) + ".gguf");
    convert_llama2c_to_gguf(test_data::shared("models/stories260K/stories260K.bin").string(),
                            test_data::shared("models/stories260K/tok512.bin").string(), path.string(),
                            WeightType::kQ8_0);
    auto m = load_model(path.string()).model;
    std::filesystem::remove(path);
    return m;
  }();
  return draft;
}

std::vector<std::pair<std::string, SpeculativeOptions>> drafts() {
  SpeculativeOptions model_draft{.kind = DraftKind::kModel, .draft_model = q8_draft()};
  SpeculativeOptions layers;
  layers.kind = DraftKind::kLayers;
  layers.draft_layers = 2;
  SpeculativeOptions lookup;
  lookup.kind = DraftKind::kLookup;
  lookup.ngram = 2;
  return {{"Q8_0 model", model_draft}, {"2 layers", layers}, {"2-gram lookup", lookup}};
}

Candidates dist(std::vector<std::pair<int32_t, float>> v) {
  Candidates c;
  for (const auto& [id, p] : v) c.data.push_back({id, 0.0f, p});
  return c;
}

TEST(SpeculativeRule, AcceptsWithProbabilityPOverQAndDrawsTheResidual) {
  const Candidates p = dist({{0, 0.5f}, {1, 0.3f}, {2, 0.2f}});
  const Candidates q = dist({{0, 0.8f}, {1, 0.1f}, {2, 0.1f}});
  // Token 0: accepted with probability .5 / .8 = .625.
  EXPECT_TRUE(speculative_accept(p, q, 0, 0.62));
  EXPECT_FALSE(speculative_accept(p, q, 0, 0.63));
  EXPECT_TRUE(speculative_accept(p, q, 1, 0.999));  // p > q: always
  // Residual max(0, p − q) = {1: .2, 2: .1}, normalized {2/3, 1/3}.
  EXPECT_EQ(speculative_residual(p, q, 0.66), 1);
  EXPECT_EQ(speculative_residual(p, q, 0.67), 2);
  // A point-mass draft: accepted with probability p(x); the residual is p without x.
  EXPECT_TRUE(speculative_accept(p, point_mass(2), 2, 0.19));
  EXPECT_FALSE(speculative_accept(p, point_mass(2), 2, 0.21));
  EXPECT_EQ(speculative_residual(p, point_mass(0), 0.0), 1);
  EXPECT_FALSE(speculative_accept(p, point_mass(7), 7, 0.0));  // not in p
}

TEST(SpeculativeRule, LookupProposesWhatFollowedTheLastNgramMostRecently) {
  const std::vector<int32_t> h = {1, 2, 5, 1, 2, 7, 1, 2};
  EXPECT_EQ(lookup_ngram_draft(h, 2, 3), (std::vector<int32_t>{7, 1, 2}));
  EXPECT_EQ(lookup_ngram_draft(h, 2, 1), (std::vector<int32_t>{7}));
  EXPECT_TRUE(lookup_ngram_draft(h, 3, 4).empty());  // "7 1 2" never occurred before
  EXPECT_EQ(lookup_ngram_draft({{1, 2, 3, 9, 1, 2, 3}}, 3, 3), (std::vector<int32_t>{9, 1, 2}));
  EXPECT_TRUE(lookup_ngram_draft(h, 5, 3).empty());
  EXPECT_TRUE(lookup_ngram_draft({{1, 2, 3}}, 1, 2).empty());
  // A run of one token: the latest occurrences have 1 and 2 tokens after them; the first has 3.
  EXPECT_EQ(lookup_ngram_draft({{9, 9, 9, 9, 9}}, 2, 3), (std::vector<int32_t>{9, 9, 9}));
  // Nothing has k tokens after it: the longest continuation.
  EXPECT_EQ(lookup_ngram_draft({{4, 5, 6, 4, 5}}, 2, 5), (std::vector<int32_t>{6, 4, 5}));
}

using test_prompts::greedy_options;

TEST(Speculative, GreedyOutputIsUnchangedByEveryDraft) {
  auto json = GrammarAutomaton::compile(parse_gbnf(test_data::read_file(test_data::shared("grammars/llama.cpp/json.gbnf"))));
  for (const auto& [name, spec] : drafts()) {
    for (const char* prompt : test_prompts::kPrompts) {
      const GenerateOptions o = greedy_options(prompt, nullptr, 96);
      const GenerateResult plain = generate(model(), o);
      const GenerateResult fast = generate_speculative(model(), o, spec);
      EXPECT_EQ(fast.tokens, plain.tokens) << name << ": " << prompt;
      EXPECT_EQ(fast.text, plain.text) << name << ": " << prompt;
      EXPECT_LE(fast.target_passes, static_cast<int32_t>(plain.tokens.size()));
    }
    for (const char* prompt : test_prompts::kPrompts) {
      const GenerateOptions o = greedy_options(prompt, json, 64);
      const GenerateResult plain = generate(model(), o);
      const GenerateResult fast = generate_speculative(model(), o, spec);
      EXPECT_EQ(fast.tokens, plain.tokens) << name << " under json.gbnf: " << prompt;
      EXPECT_TRUE(fast.complete) << fast.text;
    }
  }
}

TEST(Speculative, TheQ8DraftIsAcceptedAlmostAlways) {
  const GenerateResult r = generate_speculative(model(), greedy_options("Once upon a time", nullptr, 128), drafts()[0].second);
  ASSERT_GT(r.draft_tokens, 0);
  EXPECT_GT(static_cast<double>(r.accepted_draft_tokens) / r.draft_tokens, 0.8);
  EXPECT_GT(static_cast<double>(r.tokens.size()) / r.target_passes, 3.0);
}

// The first three tokens of seeded runs, against the exact distribution plain sampling has
// (top-k 4 at temperature 2: at most 64 outcomes, most of them likely enough to count). A fixed seed set: the same verdict every
// run. `bench speculative` runs the same test with 20,000 seeds per draft.
TEST(Speculative, SampledOutputsAreDistributedAsPlainSampling) {
  GenerateOptions o;
  o.prompt = "The dog and the cat and the dog and the";  // the lookup draft finds n-grams to propose
  o.max_tokens = 3;
  o.sampling.temperature = 2.0f;
  o.sampling.top_k = 4;
  o.sampling.top_p = 1.0f;
  o.sampling.min_p = 0.0f;
  o.jump_forward = false;
  const auto expected = exact_output_distribution(model(), o, 3);
  double total = 0;
  for (const auto& [k, p] : expected) total += p;
  EXPECT_NEAR(total, 1.0, 1e-5);
  constexpr uint64_t kRuns = 3000;
  std::map<std::vector<int32_t>, size_t> plain;
  for (uint64_t seed = 0; seed < kRuns; ++seed) {
    o.sampling.seed = seed;
    ++plain[generate(model(), o).tokens];
  }
  const ChiSquare plain_test = chi_square_test(plain, expected);
  EXPECT_GT(plain_test.p_value, 0.01) << "plain sampling against its own exact distribution";
  for (const auto& [name, spec] : drafts()) {
    std::map<std::vector<int32_t>, size_t> observed;
    size_t proposed = 0;
    for (uint64_t seed = 0; seed < kRuns; ++seed) {
      o.sampling.seed = seed;
      const GenerateResult r = generate_speculative(model(), o, spec);
      ++observed[r.tokens];
      proposed += r.draft_tokens > 0;
    }
    EXPECT_GT(proposed, kRuns / 2) << name << ": the draft must propose in most runs for the test to say something";
    const ChiSquare t = chi_square_test(observed, expected);
    EXPECT_GT(t.p_value, 0.01) << name << ": chi-square " << t.statistic << " on " << t.degrees_of_freedom << " df";
    EXPECT_GE(t.bins, 10u);
  }
}

TEST(Speculative, UnsupportedOptionsAreErrors) {
  GenerateOptions o = greedy_options("x", nullptr, 8);
  o.token_healing = true;
  EXPECT_THROW(generate_speculative(model(), o, drafts()[1].second), std::invalid_argument);
  o = greedy_options("x", nullptr, 8);
  SpeculativeOptions too_deep;
  too_deep.kind = DraftKind::kLayers;
  too_deep.draft_layers = 99;
  EXPECT_THROW(generate_speculative(model(), o, too_deep), std::invalid_argument);
}

}  // namespace
}  // namespace lockstep
