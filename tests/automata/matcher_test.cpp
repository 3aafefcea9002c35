// The Earley matcher: llama.cpp's GBNF accept/reject vectors, hard grammar shapes
// (left recursion, ambiguity, nullable chains), UTF-8 splits, rollback, and the token
// bitmask against brute force.
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/matcher.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

std::shared_ptr<const GrammarAutomaton> compile(const std::string& gbnf) {
  return GrammarAutomaton::compile(parse_gbnf(gbnf));
}

bool accepts(const GrammarAutomaton& g, std::string_view text) {
  EarleyParser p(g);
  return p.advance(text) && p.accepting();
}

TEST(Matcher, LlamaCppGbnfAcceptRejectCases) {
  const auto cases = nlohmann::json::parse(
      test_data::read_file(test_data::shared("grammars/llama.cpp/llama.cpp_test_cases.json")));
  int grammars = 0, strings = 0;
  for (const auto& c : cases) {
    if (c["kind"] != "gbnf_accept_reject") continue;
    const std::string text = c["grammar"];
    if (text.find("::=") == std::string::npos) continue;  // Lark-syntax cases: not GBNF
    SCOPED_TRACE(c["desc"].get<std::string>());
    auto g = compile(text);
    ++grammars;
    for (const auto& s : c["accept"]) {
      EXPECT_TRUE(accepts(*g, s.get<std::string>())) << "should accept: " << s;
      ++strings;
    }
    for (const auto& s : c["reject"]) {
      EXPECT_FALSE(accepts(*g, s.get<std::string>())) << "should reject: " << s;
      ++strings;
    }
  }
  EXPECT_EQ(grammars, 12);
  EXPECT_EQ(strings, 119);
}

TEST(Matcher, LeftRecursionAmbiguityAndNullableRules) {
  auto left = compile("root ::= root \"a\" | \"b\"");
  EXPECT_TRUE(accepts(*left, "b"));
  EXPECT_TRUE(accepts(*left, "baaaa"));
  EXPECT_FALSE(accepts(*left, "ab"));
  EXPECT_FALSE(accepts(*left, ""));

  auto ambiguous = compile("root ::= x x x\nx ::= \"a\"* | \"a\" \"a\"*");
  EXPECT_TRUE(accepts(*ambiguous, ""));
  EXPECT_TRUE(accepts(*ambiguous, "aaaaaaa"));
  EXPECT_FALSE(accepts(*ambiguous, "ab"));

  auto nullable = compile("root ::= a b \"c\" a\na ::= \"\" | \"x\"\nb ::= a a");
  for (const char* s : {"c", "xc", "xxc", "xxxc", "xxxcx", "cx"}) EXPECT_TRUE(accepts(*nullable, s)) << s;
  for (const char* s : {"", "xxxxc", "cxx"}) EXPECT_FALSE(accepts(*nullable, s)) << s;

  auto balanced = compile("root ::= \"\" | \"(\" root \")\" root");
  EXPECT_TRUE(accepts(*balanced, "(()())()"));
  EXPECT_FALSE(accepts(*balanced, "(()"));
  EXPECT_FALSE(accepts(*balanced, "())"));

  auto mutual = compile("root ::= a\na ::= b \"x\" | \"y\"\nb ::= a \"z\"");  // indirect left recursion
  EXPECT_TRUE(accepts(*mutual, "yzx"));
  EXPECT_TRUE(accepts(*mutual, "yzxzx"));
  EXPECT_FALSE(accepts(*mutual, "yzxz"));
}

TEST(Matcher, TokensMaySplitCodePoints) {
  auto vocab = std::make_shared<Vocabulary>(
      std::vector<std::string>{"\xC3", "\xA9", "\xC3\xA9", "e"},
      std::vector<TokenKind>(4, TokenKind::kText), std::vector<int32_t>{});
  EarleyMatcher m(compile("root ::= [é]+"), vocab);
  EXPECT_FALSE(m.accept_token(3));
  EXPECT_TRUE(m.accept_token(0));
  EXPECT_FALSE(m.is_accepting());
  EXPECT_FALSE(m.accept_token(0));
  EXPECT_TRUE(m.accept_token(1));
  EXPECT_TRUE(m.is_accepting());
  EXPECT_TRUE(m.accept_token(2));
  m.rollback(2);
  EXPECT_EQ(m.num_steps(), 1u);
  EXPECT_FALSE(m.is_accepting());
}

TEST(Matcher, EndOfGenerationOnlyWhenAccepting) {
  auto vocab = std::make_shared<Vocabulary>(
      std::vector<std::string>{"", "a", "b", "<s>"},
      std::vector<TokenKind>{TokenKind::kControl, TokenKind::kText, TokenKind::kText,
                             TokenKind::kControl},
      std::vector<int32_t>{0});
  EarleyMatcher m(compile("root ::= \"a\"+ \"b\"?"), vocab);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b0010u);  // only "a"
  EXPECT_FALSE(m.accept_token(0));
  EXPECT_TRUE(m.accept_token(1));
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b0111u);  // EOG, "a", "b"; never the control token 3
  EXPECT_FALSE(m.accept_token(3));
  EXPECT_TRUE(m.accept_token(2));
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b0001u);
  EXPECT_TRUE(m.accept_token(0));
  EXPECT_TRUE(m.is_terminated());
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0u);
  EXPECT_FALSE(m.accept_token(1));
  m.rollback(1);
  EXPECT_FALSE(m.is_terminated());
  EXPECT_THROW(m.rollback(5), std::out_of_range);
  EXPECT_THROW(m.accept_token(4), std::out_of_range);
}

// Configuration masks live in the TokenMaskCache: a second sequence over the same cache
// reads the masks the first one stored (a hit on its very first mask), and they are the
// masks it would compute itself.
TEST(Matcher, SequencesOfOneCacheShareConfigurationMasks) {
  auto vocab = std::make_shared<Vocabulary>(
      std::vector<std::string>{"", "[", "]", "1", ",", "12", "],", "[1"},
      std::vector<TokenKind>{TokenKind::kControl, TokenKind::kText, TokenKind::kText, TokenKind::kText,
                             TokenKind::kText, TokenKind::kText, TokenKind::kText, TokenKind::kText},
      std::vector<int32_t>{0});
  const auto g = compile("root ::= list\nlist ::= \"[\" (item (\",\" item)*)? \"]\"\nitem ::= [0-9]+ | list");
  auto cache = std::make_shared<TokenMaskCache>(g, vocab);
  const int32_t doc[] = {1, 5, 4, 7, 2, 2};  // [12,[1]]
  std::vector<std::vector<uint32_t>> first_masks;
  EarleyMatcher a(cache);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  for (const int32_t id : doc) {
    a.fill_next_token_bitmask(mask);
    first_masks.push_back(mask);
    ASSERT_TRUE(a.accept_token(id));
  }
  EXPECT_EQ(a.counters().configuration_hits, 0u);
  EarleyMatcher b(cache);
  EarleyMatcher alone(g, vocab);  // a private cache: computes every mask itself
  alone.set_configuration_cache(false);
  for (size_t i = 0; i < std::size(doc); ++i) {
    b.fill_next_token_bitmask(mask);
    EXPECT_EQ(mask, first_masks[i]) << "step " << i;
    std::vector<uint32_t> own(vocab->bitmask_words());
    alone.fill_next_token_bitmask(own);
    EXPECT_EQ(mask, own) << "step " << i;
    ASSERT_TRUE(b.accept_token(doc[i]));
    ASSERT_TRUE(alone.accept_token(doc[i]));
  }
  EXPECT_EQ(b.counters().configuration_hits, std::size(doc));
}

// After "{" the parse holds two items of root: before `ws` and, `ws` being nullable, after
// it. The first one's walk skips `ws` too, so the second one's mask is never computed.
TEST(Matcher, ItemsImpliedThroughNullableRulesTakeNoMaskOfTheirOwn) {
  auto vocab = std::make_shared<Vocabulary>(
      std::vector<std::string>{"", "{", "}", " ", "{ ", " }"},
      std::vector<TokenKind>{TokenKind::kControl, TokenKind::kText, TokenKind::kText, TokenKind::kText,
                             TokenKind::kText, TokenKind::kText},
      std::vector<int32_t>{0});
  const auto g = compile("root ::= \"{\" ws \"}\"\nws ::= (\" \" ws)?");  // recursive: ws stays a rule
  auto cache = std::make_shared<TokenMaskCache>(g, vocab);
  EarleyMatcher m(cache);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b010010u);  // "{", "{ "
  ASSERT_TRUE(m.accept_token(1));
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b101100u);  // "}", " ", " }"
  EXPECT_EQ(cache->stats().computed, 2u);  // the start and the item before `ws`
  ASSERT_TRUE(m.accept_token(3));
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b101100u);  // inside ws: more spaces, or the end
}

// Every token's bytes fed to a fresh copy of the matcher: the definition of the mask.
std::vector<uint32_t> brute_force_mask(const EarleyMatcher& m) {
  const Vocabulary& v = m.vocabulary();
  std::vector<uint32_t> mask(v.bitmask_words(), 0);
  for (size_t id = 0; id < v.size(); ++id) {
    EarleyMatcher copy = m.fork();
    if (copy.accept_token(static_cast<int32_t>(id))) mask[id / 32] |= 1u << (id % 32);
  }
  return mask;
}

TEST(Matcher, BitmaskEqualsBruteForceAlongRandomWalks) {
  // A small vocabulary of every string over a few symbols up to length 3, plus UTF-8 pieces.
  std::vector<std::string> tokens{"</s>"};
  const std::string alphabet[] = {"a", "b", "{", "}", "\"", " ", "1", "\xC3", "\xA9", ","};
  for (const auto& x : alphabet) {
    tokens.push_back(x);
    for (const auto& y : alphabet) {
      tokens.push_back(x + y);
      for (const auto& z : {std::string("a"), std::string("\""), std::string("}")}) {
        tokens.push_back(x + y + z);
      }
    }
  }
  std::vector<TokenKind> kinds(tokens.size(), TokenKind::kText);
  auto vocab = std::make_shared<Vocabulary>(tokens, kinds, std::vector<int32_t>{0});
  const char* grammars[] = {
      R"(root ::= "{" (pair ("," pair)*)? "}"
pair ::= "\"" [aé]* "\"" " "? ":"? [0-9]+)",
      "root ::= (\"a\" | \"ab\" | \"b\" root)* \"}\"",
      "root ::= [^a]{2,5} \"a\"",
      // Recursive nullable rules stay rules: items after an empty `ws` are implied by the
      // items before it (EarleyMatcher::prune_implied).
      R"(root ::= "{" ws (pair ws ("," ws pair ws)*)? "}"
ws ::= (" " ws)?
pair ::= "\"" [aé]* "\"" ws ":" ws [0-9]+)",
  };
  std::mt19937 rng(7);
  for (const char* text : grammars) {
    SCOPED_TRACE(text);
    EarleyMatcher m(compile(text), vocab);
    std::vector<uint32_t> mask(vocab->bitmask_words());
    for (int walk = 0; walk < 5; ++walk) {
      m.reset();
      for (int step = 0; step < 12; ++step) {
        m.fill_next_token_bitmask(mask);
        ASSERT_EQ(mask, brute_force_mask(m)) << "step " << step;
        std::vector<int32_t> allowed;
        for (size_t id = 0; id < vocab->size(); ++id) {
          if (mask[id / 32] >> (id % 32) & 1) allowed.push_back(static_cast<int32_t>(id));
        }
        if (allowed.empty()) break;
        ASSERT_TRUE(m.accept_token(allowed[rng() % allowed.size()]));
        if (m.is_terminated()) break;
        if (step % 4 == 3) m.rollback(1 + rng() % m.num_steps());
      }
    }
  }
}

TEST(Matcher, ParserLimitsEndWithAnErrorNotAHang) {
  // Exponentially ambiguous: every split of the input into x's is a parse.
  auto g = compile("root ::= x*\nx ::= \"a\" | \"a\" \"a\" | x x");
  EarleyParser p(*g, ParserLimits{200});
  bool threw = false;
  try {
    for (int i = 0; i < 1000; ++i) ASSERT_TRUE(p.advance('a'));
  } catch (const ParserLimitError& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("too ambiguous"), std::string::npos);
  }
  EXPECT_TRUE(threw);
  // The parser is still usable after the error.
  const size_t n = p.num_bytes();
  p.rollback(n);
  EXPECT_TRUE(p.advance('a'));
}

}  // namespace
}  // namespace lockstep
