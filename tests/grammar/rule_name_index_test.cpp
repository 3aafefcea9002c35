// Grammar's name index (RuleNameIndex) against a plain scan of the rules: every rule found
// by its name, a second rule of a name refused, a renamed rule no longer found under its old
// name, and rules appended without add_rule found by the scan find_rule falls back to.
#include <gtest/gtest.h>

#include <string>

#include "grammar/grammar.h"

namespace lockstep {
namespace {

int64_t scan(const Grammar& g, const std::string& name) {
  for (size_t i = 0; i < g.rules.size(); ++i) {
    if (g.rules[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

TEST(RuleNameIndex, FindsEveryRuleAsAScanDoes) {
  Grammar g;
  // Enough rules for several rehashes; names like a schema's ("members-s22-1818").
  for (uint32_t i = 0; i < 5000; ++i) {
    EXPECT_EQ(g.add_rule("members-s" + std::to_string(i % 97) + "-" + std::to_string(i), Expr::empty()), i);
  }
  EXPECT_EQ(g.names.added(), 5000u);
  for (uint32_t i = 0; i < 5000; i += 7) {
    const std::string name = "members-s" + std::to_string(i % 97) + "-" + std::to_string(i);
    EXPECT_EQ(g.find_rule(name), static_cast<int64_t>(i)) << name;
    EXPECT_EQ(g.find_rule(name), scan(g, name));
  }
  EXPECT_EQ(g.find_rule("members-s0-5000"), -1);
  EXPECT_EQ(g.find_rule(""), -1);
  EXPECT_THROW(g.add_rule("members-s3-3", Expr::empty()), GrammarError);
  EXPECT_EQ(g.rules.size(), 5000u);  // the refused rule was not added
}

TEST(RuleNameIndex, RenamedAndDirectlyAppendedRules) {
  Grammar g;
  g.add_rule("a", Expr::empty());
  g.add_rule("b", Expr::empty());
  // A rule renamed in place: its old name is free again, and a new rule may take it.
  g.rules[0].name = "a2";
  EXPECT_EQ(g.find_rule("a"), -1);
  EXPECT_EQ(g.add_rule("a", Expr::literal("x")), 2u);
  EXPECT_EQ(g.find_rule("a"), 2);
  // A rule appended without add_rule: the index no longer covers every rule, so lookups
  // that miss it scan (finding the renamed rule under its new name too).
  g.rules.push_back(Rule{"c", Expr::empty(), {}, false});
  EXPECT_EQ(g.find_rule("c"), 3);
  EXPECT_EQ(g.find_rule("a2"), 0);
  EXPECT_THROW(g.add_rule("c", Expr::empty()), GrammarError);
  EXPECT_EQ(g.add_rule("d", Expr::empty()), 4u);
  EXPECT_EQ(g.find_rule("d"), 4);
  EXPECT_EQ(g.find_rule("b"), 1);
  // A copy keeps its index.
  const Grammar copy = g;
  EXPECT_EQ(copy.find_rule("d"), 4);
  EXPECT_EQ(copy.find_rule("zz"), -1);
}

}  // namespace
}  // namespace lockstep
