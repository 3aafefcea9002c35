// The JSON building blocks prepared at vocabulary load (runtime/json_warm_start.h): what a
// grammar compiled afterwards finds in the process-wide caches instead of walking itself.
#include <memory>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "automata/mask/token_set.h"
#include "automata/mask_cache.h"
#include "runtime/json_warm_start.h"
#include "runtime/tokenizer.h"
#include "schemas/json_schema.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

std::vector<uint32_t> bits(const StateMask& m, size_t vocab_size) {
  std::vector<uint32_t> words((vocab_size + 31) / 32, 0);
  m.accepted.or_into(words);
  return words;
}

// A string longer than a length block is a block of exactly 512 code points, tails and, in
// a grammar this large, escape rules (automata/json_escapes.h). Its automaton rules' first
// positions are masks of the warm start: a prepared vocabulary computes none of them, an
// unprepared one (the same tokens, another Vocabulary object, so cold caches) computes
// them, and both get the same masks.
TEST(JsonWarmStart, LongStringsStartFromPreparedMasks) {
  const std::string path = test_data::shared("vocab/llama2/hf/tokenizer.json").string();
  const auto prepared_tokenizer = load_tokenizer(path);
  const auto cold_tokenizer = load_tokenizer(path);
  const auto prepared = prepared_tokenizer->shared_vocabulary();
  const auto cold = cold_tokenizer->shared_vocabulary();
  ASSERT_NE(prepared->id(), cold->id());
  prepare_json_building_blocks(prepared);

  auto grammar = [] {
    CompiledSchema cs = compile_json_schema(nlohmann::ordered_json::parse(R"({"type": "string", "maxLength": 4096})"), {});
    return GrammarAutomaton::compile(std::move(cs.grammar));
  };
  TokenMaskCache warm_cache(grammar(), prepared), cold_cache(grammar(), cold);
  const GrammarAutomaton& g = warm_cache.grammar();
  size_t string_rules = 0;
  for (uint32_t r = 0; r < g.num_rules(); ++r) {
    const uint32_t start = g.rule_start(r);
    if (start == g.rule_end(r) || !g.rule_edges(start).empty() || g.byte_edges(start).empty()) continue;
    ++string_rules;
    EXPECT_EQ(bits(warm_cache.get(start), prepared->size()), bits(cold_cache.get(start), cold->size())) << "rule " << r;
  }
  EXPECT_GE(string_rules, 3u);  // the block, the tails, the escape rules
  EXPECT_EQ(warm_cache.stats().computations, 0u);
  EXPECT_GT(cold_cache.stats().computations, 0u);
}

}  // namespace
}  // namespace lockstep
