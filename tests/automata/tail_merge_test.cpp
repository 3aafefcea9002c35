// Tail-merged rules (Rule::tail_merged): a reference that ends a body continues the caller's
// automaton into one shared copy of the callee's body. The language must be the one the calls
// give, the merged rules must not be compiled on their own, and the process-wide cache of
// rule automata must tell callers apart by what they merge.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "automata/inline.h"
#include "automata/matcher.h"
#include "tests/automata/language_strings.h"

namespace lockstep {
namespace {

using test_languages::accepts;
using test_languages::all_strings;

// `gbnf` with the rules `kept` kept from inlining (as the front end keeps a member machine's
// states), tail-merged when `merge`; a rule `first` is kept from inlining too (as the front
// end keeps the machine's first step: inlined, the references it ends with would not end one).
Grammar with_merged(std::string_view gbnf, const std::vector<std::string>& kept, bool merge = true) {
  Grammar g = parse_gbnf(gbnf);
  if (const int first = g.find_rule("first"); first >= 0) g.rules[static_cast<size_t>(first)].no_inline = true;
  for (const auto& name : kept) {
    const int r = g.find_rule(name);
    EXPECT_GE(r, 0) << name;
    if (r < 0) continue;
    g.rules[static_cast<size_t>(r)].no_inline = true;
    g.rules[static_cast<size_t>(r)].tail_merged = merge;
  }
  return g;
}

// A member machine as the JSON Schema front end writes one (three required names in any
// order, one rule per state, each state's references at the ends of bodies), a tail-recursive
// rule (a cycle through the merge) and a merged rule also referenced where it does not end a
// body (`s3` inside `twice`, which must stay a call there).
constexpr const char* kMachine = R"gbnf(
root ::= "{" first "}" | "<" loop | "(" twice ")"
first ::= "a" sa | "b" sb | "c" sc
sa ::= "," ("b" sab | "c" sac)
sb ::= "," ("a" sab | "c" sbc)
sc ::= "," ("a" sac | "b" sbc)
sab ::= "," "c" s3
sac ::= "," "b" s3
sbc ::= "," "a" s3
s3 ::= "" | ";"
loop ::= "x" loop | "y>"
twice ::= s3 "!" s3
)gbnf";

TEST(TailMerge, SameLanguageAsCallsAndTheMergedRulesAreNotCompiledAlone) {
  const std::vector<std::string> merged{"sa", "sb", "sc", "sab", "sac", "sbc", "s3", "loop"};
  const auto with = GrammarAutomaton::compile(with_merged(kMachine, merged));
  const auto without = GrammarAutomaton::compile(with_merged(kMachine, merged, false));
  // Every string of each part's shape up to a length, the brackets around it.
  std::vector<std::string> texts;
  for (const auto& w : all_strings("abc,;", 7)) texts.push_back("{" + w + "}");
  for (const auto& w : all_strings("xy", 8)) texts.push_back("<" + w + ">");
  for (const auto& w : all_strings(";!", 4)) texts.push_back("(" + w + ")");
  size_t accepted = 0;
  for (const auto& s : texts) {
    const bool expected = accepts(*without, s);
    ASSERT_EQ(accepts(*with, s), expected) << '"' << s << '"';
    accepted += expected;
  }
  // 6 orders of a, b, c (";" after them or not), <x{0,7}y>, (!) (;!) (!;) (;!;).
  EXPECT_EQ(accepted, 12u + 8 + 4);
  for (const char* s : {"{a,b,c}", "{c,a,b;}", "<xxxxxxxxxxy>", "(;!;)"}) EXPECT_TRUE(accepts(*with, s)) << s;
  for (const char* s : {"{a,a,b}", "{a,b}", "{a,b,c,a}", "<x>", "(!!)"}) EXPECT_FALSE(accepts(*with, s)) << s;
  // The machine's states and the loop are states of `first` and `root`: their own rules are
  // never called, so they are left a lone state each (with calls, each is an automaton of
  // its own). s3 is still called from `twice`.
  const Grammar& g = with->grammar();
  for (const char* name : {"sa", "sb", "sc", "sab", "sac", "sbc", "loop"}) {
    const auto r = static_cast<uint32_t>(g.find_rule(name));
    EXPECT_EQ(with->rule_end(r) - with->rule_start(r), 1u) << name;
    EXPECT_GT(without->rule_end(r) - without->rule_start(r), 1u) << name;
  }
  const auto s3 = static_cast<uint32_t>(g.find_rule("s3"));
  EXPECT_GT(with->rule_end(s3) - with->rule_start(s3), 1u);
}

// Two callers alike but for the body they merge: the cached automaton of the first must not
// serve the second (the shape key reads merged bodies as the builder does).
TEST(TailMerge, CachedAutomataTellMergedBodiesApart) {
  const auto x = GrammarAutomaton::compile(with_merged("root ::= \"[\" first \"]\"\nfirst ::= \"a\" tail\ntail ::= \"x\"", {"tail"}));
  const auto y = GrammarAutomaton::compile(with_merged("root ::= \"[\" first \"]\"\nfirst ::= \"a\" tail\ntail ::= \"y\"", {"tail"}));
  const auto tail = static_cast<uint32_t>(y->grammar().find_rule("tail"));
  EXPECT_EQ(y->rule_end(tail) - y->rule_start(tail), 1u);  // merged into `first`
  EXPECT_TRUE(accepts(*x, "[ax]"));
  EXPECT_FALSE(accepts(*x, "[ay]"));
  EXPECT_TRUE(accepts(*y, "[ay]"));
  EXPECT_FALSE(accepts(*y, "[ax]"));
}

// A chain of merged rules longer than InlinePlan::kMaxMergeDepth: the builder stops merging
// there (its recursion stays bounded) and calls the rule at that depth, which merges the rest.
TEST(TailMerge, LongChainsMergeInPieces) {
  constexpr int kChain = 600;
  std::string text = "root ::= \"<\" first \">\"\nfirst ::= \"a\" r0\n";
  std::vector<std::string> chain;
  for (int i = 0; i < kChain; ++i) {
    const std::string next = i + 1 < kChain ? " r" + std::to_string(i + 1) : "";
    text += "r" + std::to_string(i) + " ::= \"a\"" + next + " | \"b\"\n";
    chain.push_back("r" + std::to_string(i));
  }
  const auto g = GrammarAutomaton::compile(with_merged(text, chain));
  // first reads one 'a', r_i the (i + 2)-th: a^n b for n in 1..600, and a^601.
  for (const int n : {1, 2, 255, 256, 257, 258, 513, 514, 600, 601}) {
    EXPECT_EQ(accepts(*g, "<" + std::string(static_cast<size_t>(n), 'a') + "b>"), n <= 600) << n;
    EXPECT_EQ(accepts(*g, "<" + std::string(static_cast<size_t>(n), 'a') + ">"), n == 601) << n;
  }
  EXPECT_FALSE(accepts(*g, "<" + std::string(602, 'a') + ">"));
  size_t compiled = 0;  // the rules where merging stopped and a call begins
  for (const auto& name : chain) {
    const auto r = static_cast<uint32_t>(g->grammar().find_rule(name));
    compiled += g->rule_end(r) - g->rule_start(r) > 1;
  }
  EXPECT_EQ(compiled, (kChain - 1) / InlinePlan::kMaxMergeDepth);
}

// Without inlining the compiler keeps every call, merged rules included.
TEST(TailMerge, OffWithoutInlining) {
  CompileLimits no_inlining;
  no_inlining.inline_rules = false;
  const auto g = GrammarAutomaton::compile(with_merged(kMachine, {"sa", "loop"}), no_inlining);
  for (const char* name : {"sa", "loop"}) {
    const auto r = static_cast<uint32_t>(g->grammar().find_rule(name));
    EXPECT_GT(g->rule_end(r) - g->rule_start(r), 1u) << name;
  }
  EXPECT_TRUE(accepts(*g, "{a,c,b;}"));
  EXPECT_TRUE(accepts(*g, "<xy>"));
}

}  // namespace
}  // namespace lockstep
