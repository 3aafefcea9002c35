// Generation's bound on whitespace runs: unbounded whitespace-only rules lose their long
// strings and nothing else; rules with a bound of their own, and other rules, stay as written.
#include <gtest/gtest.h>

#include "automata/earley.h"
#include "grammar/grammar.h"

namespace lockstep {
namespace {

bool accepts(const Grammar& g, const std::string& text) {
  const auto c = GrammarAutomaton::compile(g);
  EarleyParser p(*c);
  return p.advance(text) && p.accepting();
}

TEST(WhitespaceBound, StarPlusAndRecursiveRulesKeepRunsUpToTheBound) {
  for (const char* ws : {"ws ::= [ \\t\\n]*", "ws ::= ([ \\t\\n] ws)?", "ws ::= sp*\nsp ::= \" \" | \"\\t\""}) {
    SCOPED_TRACE(ws);
    const std::string text = std::string("root ::= \"a\" ws \"b\"\n") + ws;
    Grammar g = parse_gbnf(text);
    EXPECT_EQ(bound_whitespace_rules(g, 3), std::vector<std::string>{"ws"});
    EXPECT_TRUE(accepts(g, "ab"));
    EXPECT_TRUE(accepts(g, "a \tb"));
    EXPECT_TRUE(accepts(g, "a   b"));
    EXPECT_FALSE(accepts(g, "a    b"));
    EXPECT_TRUE(accepts(parse_gbnf(text), "a    b"));  // the grammar as written
  }
}

TEST(WhitespaceBound, OnlyRemovesStrings) {
  // A newline then indentation: the bound keeps that shape, never " \n".
  Grammar g = parse_gbnf("root ::= \"x\" ws \"y\"\nws ::= \"\\n\" [ ]*");
  EXPECT_EQ(bound_whitespace_rules(g, 4), std::vector<std::string>{"ws"});
  EXPECT_TRUE(accepts(g, "x\n   y"));
  EXPECT_FALSE(accepts(g, "x\n    y"));
  EXPECT_FALSE(accepts(g, "x \ny"));
  EXPECT_FALSE(accepts(g, "xy"));
}

TEST(WhitespaceBound, ARuleThatNeedsMoreThanTheBoundKeepsItsShortestRuns) {
  Grammar g = parse_gbnf("root ::= \"a\" ws \"b\"\nws ::= [ ]+");
  EXPECT_EQ(bound_whitespace_rules(g, 0), std::vector<std::string>{"ws"});
  EXPECT_TRUE(accepts(g, "a b"));
  EXPECT_FALSE(accepts(g, "a  b"));
  EXPECT_FALSE(accepts(g, "ab"));
}

TEST(WhitespaceBound, BoundedAndOtherRulesStayAsWritten) {
  Grammar g = parse_gbnf("root ::= \"{\" ws item* \"}\"\nws ::= | \" \" | \"\\n\" [ \\t]{0,20}\nitem ::= [a-z ]+");
  EXPECT_TRUE(bound_whitespace_rules(g, 2).empty());
  EXPECT_TRUE(accepts(g, "{\n" + std::string(20, ' ') + "ab     c}"));
}

}  // namespace
}  // namespace lockstep
