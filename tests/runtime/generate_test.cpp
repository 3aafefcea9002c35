// Grammar-constrained generation on the bundled model: every output is checked by paths
// that do not share the generator's code — nlohmann/json for JSON, and a fresh parser fed
// the output byte by byte for every grammar.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "automata/earley.h"
#include "runtime/generator.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

const LoadedModel& model() {
  static const LoadedModel m = load_model(test_data::shared("models/stories260K").string());
  return m;
}

std::shared_ptr<const CompiledGrammar> grammar(const std::string& name) {
  return CompiledGrammar::compile(
      parse_gbnf(test_data::read_file(test_data::shared("grammars/llama.cpp/" + name))));
}

GenerateResult run(const std::shared_ptr<const CompiledGrammar>& g, uint64_t seed,
                   std::map<int32_t, float> bias = {}) {
  GenerateOptions opt;
  opt.prompt = "Once upon a time";
  opt.max_tokens = 256;
  opt.sampling.temperature = 1.0f;
  opt.sampling.seed = seed;
  opt.sampling.logit_bias = std::move(bias);
  opt.grammar = g;
  return generate(model(), opt);
}

// Independent check: a fresh parser fed the text byte by byte.
void expect_grammar_accepts(const CompiledGrammar& g, const GenerateResult& r) {
  EarleyParser p(g);
  for (size_t i = 0; i < r.text.size(); ++i) {
    ASSERT_TRUE(p.advance(static_cast<uint8_t>(r.text[i]))) << "byte " << i << " of: " << r.text;
  }
  if (r.stop == StopReason::kEndOfGeneration) {
    EXPECT_TRUE(p.accepting()) << r.text;
    EXPECT_TRUE(model().tokenizer->vocabulary().is_eog(r.tokens.back()));
  } else {
    EXPECT_EQ(r.stop, StopReason::kMaxTokens);
    EXPECT_EQ(r.tokens.size(), 256u);
  }
}

// nlohmann/json: the whole text when generation ended, else a prefix that fails only
// because the input ended.
void expect_json(const GenerateResult& r) {
  if (r.stop == StopReason::kEndOfGeneration) {
    EXPECT_TRUE(nlohmann::json::accept(r.text)) << r.text;
    return;
  }
  try {
    const auto doc = nlohmann::json::parse(r.text);
    ADD_FAILURE() << doc.type_name() << "a cut-off output should be incomplete JSON: " << r.text;
  } catch (const nlohmann::json::parse_error& e) {
    EXPECT_EQ(e.byte, r.text.size() + 1) << e.what() << "\n" << r.text;
  }
}

TEST(Generate, JsonGrammarSeeds1To20) {
  const auto g = grammar("json.gbnf");
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    const GenerateResult r = run(g, seed);
    expect_grammar_accepts(*g, r);
    expect_json(r);
  }
}

TEST(Generate, JsonGrammarEndsWithCompleteDocuments) {
  // stories260K has no '}' piece (only the byte token <0x7D>, id 128) and rarely closes an
  // object; a logit bias towards it makes documents end, and every ended one must parse.
  const auto g = grammar("json.gbnf");
  int ended = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    const GenerateResult r = run(g, seed, {{128, 8.0f}, {436, 2.0f}});
    expect_grammar_accepts(*g, r);
    expect_json(r);
    ended += r.stop == StopReason::kEndOfGeneration;
  }
  EXPECT_GE(ended, 5);
}

TEST(Generate, ListArithmeticChessSeeds1To20) {
  for (const char* name : {"list.gbnf", "arithmetic.gbnf", "chess.gbnf"}) {
    const auto g = grammar(name);
    int ended = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      SCOPED_TRACE(std::string(name) + " seed " + std::to_string(seed));
      const GenerateResult r = run(g, seed);
      expect_grammar_accepts(*g, r);
      ended += r.stop == StopReason::kEndOfGeneration;
    }
    RecordProperty(std::string(name) + "_ended", ended);
  }
}

// --regex on the bundled model: for 20 seeds each output is a full match for RE2.
TEST(Generate, RegexOutputsAreFullMatchesForRe2) {
  const char* patterns[] = {R"([0-9]{3}-[0-9]{3}-[0-9]{4})", R"(\d{4}-\d{2}-\d{2})",
                            R"([a-z]{3,10}@[a-z]{3,10}\.(com|org|net))"};
  for (const char* pattern : patterns) {
    const auto g = CompiledGrammar::compile(parse_regex(pattern));
    const re2::RE2 re(pattern);
    ASSERT_TRUE(re.ok());
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      GenerateOptions opt;
      opt.prompt = "Once upon a time";
      opt.max_tokens = 64;
      opt.sampling.temperature = 1.0f;
      opt.sampling.seed = seed;
      opt.grammar = g;
      const GenerateResult r = generate(model(), opt);
      EXPECT_EQ(r.stop, StopReason::kEndOfGeneration) << pattern << " seed " << seed;
      EXPECT_TRUE(re2::RE2::FullMatch(r.text, re)) << pattern << " seed " << seed << ": " << r.text;
    }
  }
}

TEST(Generate, SameSeedSameOutputDifferentSeedDifferentOutput) {
  const auto g = grammar("chess.gbnf");
  EXPECT_EQ(run(g, 7).text, run(g, 7).text);
  EXPECT_NE(run(g, 7).text, run(g, 8).text);
}

TEST(Generate, PromptThatDoesNotFitIsAnError) {
  GenerateOptions opt;
  opt.prompt = std::string(3000, 'x');
  EXPECT_THROW(generate(model(), opt), std::invalid_argument);
}

}  // namespace
}  // namespace lockstep
