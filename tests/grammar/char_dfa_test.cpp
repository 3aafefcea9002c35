// Code-point automata: Boolean operations checked against their definitions on sample
// strings, and the JSON-string embedding (raw characters and escapes).
#include <gtest/gtest.h>

#include "automata/earley.h"
#include "grammar/char_dfa.h"

namespace lockstep {
namespace {

CharDfa re(const std::string& pattern) { return CharDfa::from_expr(regex_to_expr(pattern)); }

TEST(CharDfa, BooleanOperationsMatchTheirDefinitions) {
  const CharDfa a = re("[a-c]+x?");
  const CharDfa b = CharDfa::length(2, 3);
  const CharDfa both = CharDfa::intersect(a, b);
  const CharDfa either = CharDfa::unite(a, b);
  const CharDfa not_a = a.complement();
  for (const std::string s : {"", "a", "ab", "abc", "abx", "abcx", "zz", "é", "aé", "abcab", "x"}) {
    EXPECT_EQ(both.accepts(s), a.accepts(s) && b.accepts(s)) << s;
    EXPECT_EQ(either.accepts(s), a.accepts(s) || b.accepts(s)) << s;
    EXPECT_EQ(not_a.accepts(s), !a.accepts(s)) << s;
  }
  EXPECT_TRUE(CharDfa::intersect(a, not_a).empty());
  EXPECT_TRUE(CharDfa::none().empty());
  EXPECT_TRUE(CharDfa::literal("").only_empty_string());
  std::string one;
  EXPECT_TRUE(CharDfa::literal("héllo").single_string(one));
  EXPECT_EQ(one, "héllo");
  EXPECT_FALSE(a.single_string(one));
  // Minimization: (ab|ab)* and (ab)* are the same automaton.
  EXPECT_EQ(re("(ab|ab)*").size(), re("(ab)*").size());
}

bool json_body_matches(const CharDfa& dfa, const std::string& body) {
  Grammar g;
  g.root = g.add_rule("root", automaton_expr(std::make_shared<CharDfa>(dfa), true));
  auto cg = CompiledGrammar::compile(g);
  EarleyParser p(*cg);
  return p.advance(body) && p.accepting();
}

TEST(CharDfa, JsonStringBodiesAcceptRawAndEscapedForms) {
  const CharDfa letters = re("[a-c]+");
  EXPECT_TRUE(json_body_matches(letters, "abc"));
  EXPECT_TRUE(json_body_matches(letters, "a\\u0062c"));   // \u0062 = b
  EXPECT_TRUE(json_body_matches(letters, "\\u0061\\u0063"));
  EXPECT_FALSE(json_body_matches(letters, "\\u0041"));    // A
  EXPECT_FALSE(json_body_matches(letters, "a\\u00"));
  const CharDfa quote = re("x\"\\\\\\n/\\u00e9");  // x " \ newline / é
  EXPECT_TRUE(json_body_matches(quote, "x\\\"\\\\\\n/\\u00E9"));
  EXPECT_TRUE(json_body_matches(quote, "x\\u0022\\u005c\\u000a\\/é"));
  EXPECT_FALSE(json_body_matches(quote, "x\"\\\\\\n/é"));   // a raw quote ends the string
  EXPECT_FALSE(json_body_matches(re("\n"), "\n"));        // raw control characters are not JSON
  EXPECT_TRUE(json_body_matches(re("\n"), "\\n"));
  // Hex escapes cover exactly the range, whatever the case of the digits.
  const CharDfa range = re("[\\x{0100}-\\x{01FF}]");
  EXPECT_TRUE(json_body_matches(range, "\\u01aF"));
  EXPECT_TRUE(json_body_matches(range, "\\u0100"));
  EXPECT_FALSE(json_body_matches(range, "\\u0200"));
  EXPECT_FALSE(json_body_matches(range, "\\u00ff"));
}

}  // namespace
}  // namespace lockstep
