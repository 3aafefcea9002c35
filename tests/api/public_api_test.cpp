// Tests of the public C++ API (include/lockstep/): TokenizerInfo, GrammarCompiler and its
// cache, CompiledGrammar serialization, GrammarMatcher, the batch fill and the errors.
#include <random>

#include <gtest/gtest.h>

#include "automata/matcher.h"
#include "lockstep/matcher.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

const TokenizerInfo& llama3() {
  static const TokenizerInfo info =
      TokenizerInfo::from_file(test_data::shared("vocab/llama3-hf/tokenizer.json").string());
  return info;
}

std::vector<uint32_t> mask_of(GrammarMatcher& m) {
  const TokenizerInfo& info = m.compiled_grammar().tokenizer_info();
  std::vector<uint32_t> words(info.bitmask_words());
  m.fill_next_token_bitmask({words, info.vocab_size()});
  return words;
}

TEST(PublicApi, TokenizerInfoPadsTheVocabularyAndOverridesStopIds) {
  const std::string path = test_data::shared("vocab/llama3-hf/tokenizer.json").string();
  const TokenizerInfo plain = TokenizerInfo::from_file(path);
  const TokenizerInfo padded = TokenizerInfo::from_file(path, plain.vocab_size() + 64, std::vector<int32_t>{128009});
  EXPECT_EQ(padded.vocab_size(), plain.vocab_size() + 64);
  EXPECT_EQ(padded.tokenizer_size(), plain.vocab_size());
  EXPECT_EQ(padded.stop_token_ids(), std::vector<int32_t>{128009});
  EXPECT_TRUE(padded.is_special(static_cast<int32_t>(plain.vocab_size())));
  EXPECT_NE(padded.fingerprint(), plain.fingerprint());
  EXPECT_EQ(TokenizerInfo::from_file(path).fingerprint(), plain.fingerprint());
  EXPECT_EQ(padded.decode(padded.encode("Hello world")), "Hello world");

  // Padding is never allowed, even where the grammar allows everything.
  GrammarCompiler compiler(padded);
  GrammarMatcher m(compiler.compile_regex("(.|\n)*"));
  const auto words = mask_of(m);
  for (size_t id = plain.vocab_size(); id < padded.vocab_size(); ++id) EXPECT_FALSE(test_bit(words, id)) << id;
  EXPECT_TRUE(test_bit(words, 128009));  // the stop id: the empty output matches
  EXPECT_THROW(TokenizerInfo::from_file(path, 10), std::invalid_argument);
  EXPECT_THROW(TokenizerInfo::from_file(path, {}, std::vector<int32_t>{-1}), std::invalid_argument);
  EXPECT_THROW(TokenizerInfo::from_file(test_data::shared("vocab/gpt2/LICENSE").string()), Error);
}

TEST(PublicApi, TokenizerInfoFromTokensAndFromJsonText) {
  const TokenizerInfo small = TokenizerInfo::from_tokens({"a", "b", "ab", "", "</s>"}, {3}, {4}, 40);
  EXPECT_EQ(small.vocab_size(), 40u);
  EXPECT_EQ(small.bitmask_words(), 2u);
  EXPECT_FALSE(small.can_encode());
  EXPECT_EQ(small.decode(std::vector<int32_t>{2, 0}), "aba");
  GrammarCompiler compiler(small);
  GrammarMatcher m(compiler.compile_regex("(ab)+"));
  auto words = mask_of(m);
  EXPECT_TRUE(test_bit(words, 0));
  EXPECT_TRUE(test_bit(words, 2));
  EXPECT_FALSE(test_bit(words, 1));
  EXPECT_FALSE(test_bit(words, 3));
  EXPECT_FALSE(test_bit(words, 4));  // special: never text
  EXPECT_TRUE(m.accept_token(2));
  words = mask_of(m);
  EXPECT_TRUE(test_bit(words, 3));  // complete: the stop token

  const TokenizerInfo from_text = TokenizerInfo::from_tokenizer_json(
      test_data::read_file(test_data::shared("vocab/llama3-hf/tokenizer.json")), {}, std::vector<int32_t>{128001, 128009});
  EXPECT_EQ(from_text.vocab_size(), llama3().vocab_size());
  EXPECT_EQ(from_text.encode("{\"a\": 1}"), llama3().encode("{\"a\": 1}"));
  try {
    TokenizerInfo::from_tokenizer_json("{\"model\": 3", {}, {}, "tok");
    FAIL();
  } catch (const TokenizerError& e) {
    EXPECT_NE(std::string(e.what()).find("tok: byte offset"), std::string::npos) << e.what();
  }
}

TEST(PublicApi, CompilerCachesByCanonicalSourceAndOptions) {
  GrammarCompiler compiler(llama3());
  const auto a = compiler.compile_json_schema(R"({"type": "object", "properties": {"x": {"type": "integer"}}})");
  const auto b = compiler.compile_json_schema("{\"type\":\"object\",\n \"properties\":{\"x\":{\"type\":\"integer\"}}}");
  EXPECT_EQ(a.mask_cache(), b.mask_cache());  // same JSON, other spelling
  JsonSchemaOptions compact;
  compact.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  const auto c = compiler.compile_json_schema(R"({"type": "object", "properties": {"x": {"type": "integer"}}})", compact);
  EXPECT_NE(a.mask_cache(), c.mask_cache());
  EXPECT_EQ(compiler.cache_entries(), 2u);
  EXPECT_GT(compiler.cache_size_bytes(), 0u);

  // Serialization round trip: the same cached grammar again.
  const auto d = compiler.deserialize(c.serialize());
  EXPECT_EQ(d.mask_cache(), c.mask_cache());
  compiler.clear_cache();
  const auto e = compiler.deserialize(c.serialize());
  EXPECT_NE(e.mask_cache(), c.mask_cache());
  GrammarMatcher mc(c), me(e);
  EXPECT_EQ(mask_of(mc), mask_of(me));

  // Another vocabulary refuses it.
  GrammarCompiler other(TokenizerInfo::from_tokens({"a"}, {}));
  try {
    other.deserialize(c.serialize());
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.location().pointer.value_or("?"), "/vocabulary");
  }

  // No cache at all.
  CompilerOptions none;
  none.cache_limit_bytes = 0;
  GrammarCompiler uncached(llama3(), none);
  EXPECT_NE(uncached.compile_regex("a+").mask_cache(), uncached.compile_regex("a+").mask_cache());
  EXPECT_EQ(uncached.cache_entries(), 0u);

  // A small cache drops the least recently used grammar.
  CompilerOptions tiny;
  tiny.cache_limit_bytes = 1;
  GrammarCompiler small(llama3(), tiny);
  small.compile_regex("a+");
  EXPECT_EQ(small.cache_entries(), 0u);
}

TEST(PublicApi, MatcherStepsRollsBackForksAndJumpsForward) {
  GrammarCompiler compiler(llama3());
  JsonSchemaOptions compact;
  compact.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  const auto g = compiler.compile_json_schema(
      R"({"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false})",
      compact);
  GrammarMatcher m(g);
  // Only `{"` is forced: a key may spell its letters as \u escapes.
  EXPECT_EQ(m.find_jump_forward_string(), "{\"");
  EXPECT_GE(m.min_tokens_to_accept(), 2u);
  const auto ids = llama3().encode("{\"name\":\"Ada\"}");
  EXPECT_EQ(m.validate_tokens(ids), ids.size());
  EXPECT_EQ(m.num_steps(), 0u);
  std::vector<int32_t> bad = ids;
  bad.insert(bad.begin() + 1, ids[0]);
  EXPECT_EQ(m.validate_tokens(bad), 1u);
  for (int32_t id : ids) ASSERT_TRUE(m.accept_token(id));
  EXPECT_TRUE(m.is_accepting());
  EXPECT_EQ(m.min_tokens_to_accept(), 0u);
  GrammarMatcher f = m.fork();
  EXPECT_TRUE(f.accept_token(128009));
  EXPECT_TRUE(f.is_terminated());
  EXPECT_FALSE(m.is_terminated());
  m.rollback(ids.size());
  EXPECT_EQ(m.num_steps(), 0u);
  EXPECT_FALSE(m.is_accepting());
  EXPECT_TRUE(m.accept_string("{\"name\":\""));
  EXPECT_FALSE(m.accept_string("\x01"));  // a control character inside a string
  m.reset();
  EXPECT_EQ(m.num_steps(), 0u);
  std::vector<uint32_t> short_words(3);
  EXPECT_THROW(m.fill_next_token_bitmask({short_words, 90}), std::invalid_argument);
  EXPECT_THROW(m.accept_token(-1), std::out_of_range);
}

// The public matcher's masks are the engine's (a forwarding layer), on random walks; the
// batch fill equals one fill per matcher.
TEST(PublicApi, MasksEqualTheEnginesAndTheBatchFill) {
  GrammarCompiler compiler(llama3());
  const auto g = compiler.compile_grammar(test_data::read_file(test_data::shared("grammars/llama.cpp/json.gbnf")));
  std::mt19937 rng(7);
  std::vector<GrammarMatcher> matchers;
  for (int i = 0; i < 4; ++i) matchers.emplace_back(g);
  for (int step = 0; step < 12; ++step) {
    const size_t words = llama3().bitmask_words();
    std::vector<uint32_t> batch(matchers.size() * words);
    std::vector<GrammarMatcher*> ptrs;
    for (auto& m : matchers) ptrs.push_back(&m);
    fill_next_token_bitmasks(ptrs, batch, words, 2);
    for (size_t i = 0; i < matchers.size(); ++i) {
      const auto one = mask_of(matchers[i]);
      ASSERT_TRUE(std::equal(one.begin(), one.end(), batch.begin() + static_cast<ptrdiff_t>(i * words)));
      std::vector<uint32_t> direct(words);
      matchers[i].engine().fill_next_token_bitmask(direct);
      ASSERT_EQ(one, direct);
      std::vector<int32_t> allowed;
      for_each_set_bit(std::span<const uint32_t>(one), [&](int32_t id) {
        if (!llama3().is_special(id)) allowed.push_back(id);
      });
      ASSERT_FALSE(allowed.empty());
      ASSERT_TRUE(matchers[i].accept_token(allowed[rng() % allowed.size()]));
    }
  }
}

// count_bits and for_each_set_bit (lockstep/bitmask.h) read words in pairs and skip empty
// pairs: every bit counted and listed once, in order, for odd and even word counts, sparse
// and dense masks.
TEST(PublicApi, BitmaskHelpersCountAndListEveryBit) {
  std::mt19937 rng(3);
  for (size_t words : {0, 1, 2, 3, 7, 8, 4009}) {
    for (unsigned density : {0u, 1u, 16u, 32u}) {  // chance of a bit in 32
      std::vector<uint32_t> mask(words);
      std::vector<size_t> expected;
      for (size_t id = 0; id < words * 32; ++id) {
        if (rng() % 32 < density) {
          set_bit(mask, id);
          expected.push_back(id);
        }
      }
      EXPECT_EQ(count_bits(mask), expected.size()) << words << " words, density " << density;
      std::vector<size_t> listed;
      for_each_set_bit(std::span<const uint32_t>(mask), [&](size_t id) { listed.push_back(id); });
      EXPECT_EQ(listed, expected) << words << " words, density " << density;
    }
  }
}

TEST(PublicApi, ErrorsCarryTheirPlace) {
  GrammarCompiler compiler(llama3());
  try {
    compiler.compile_json_schema(R"({"type": "object", "properties": {"a": {"type": "intger"}}})");
    FAIL();
  } catch (const SchemaError& e) {
    EXPECT_EQ(e.pointer(), "/properties/a/type");
  }
  try {
    compiler.compile_json_schema(R"({"type": )");
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(e.location().byte_offset.has_value());
  }
  try {  // a number no double holds: its text and place, not the JSON library's bare message
    compiler.compile_json_schema("{\"type\": \"number\",\n \"minimum\": 1e999}");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the number 1e999 is beyond the range of a double"), std::string::npos)
        << e.what();
    ASSERT_TRUE(e.location().source.has_value());
    EXPECT_EQ(e.location().source->line, 2u);
    EXPECT_EQ(e.location().source->column, 13u);
    EXPECT_EQ(e.location().byte_offset, std::optional<uint64_t>(32));
  }
  try {
    compiler.compile_grammar("root ::= \"a\"\nx ::= (");
    FAIL();
  } catch (const GrammarError& e) {
    EXPECT_EQ(e.where().line, 2u);
  }
  EXPECT_THROW(compiler.compile_regex("a(b"), GrammarError);
  EXPECT_THROW(compiler.compile_grammar("root ::= \"a\"", "start"), GrammarError);
  try {
    compiler.compile_tools(R"([{"type": "function", "function": {"name": "f", "parameters": {"type": 5}}}])");
    FAIL();
  } catch (const SchemaError& e) {
    EXPECT_EQ(e.pointer().rfind("/0/function/parameters", 0), 0u) << e.pointer();
  }
}

}  // namespace
}  // namespace lockstep
