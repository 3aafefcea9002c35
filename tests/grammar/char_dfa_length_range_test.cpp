// Length languages without their chain (CharDfa::length_range): every operation gives the
// language length() gives, with the chain built only where states are needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "automata/earley.h"
#include "grammar/char_dfa.h"
#include "grammar/limits.h"

namespace lockstep {
namespace {

CharDfa re(const std::string& pattern) { return CharDfa::from_expr(regex_to_expr(pattern)); }

// The reachable states in breadth-first order, edges in order (a chainless automaton's
// chain): equal forms are the same automaton up to state numbering.
std::vector<uint32_t> form(const CharDfa& automaton) {
  const CharDfa d = automaton.with_states();
  std::vector<uint32_t> order{0}, id(d.size(), UINT32_MAX), out;
  id[0] = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    for (const auto& e : d.states()[order[i]].edges) {
      if (id[e.target] == UINT32_MAX) id[e.target] = static_cast<uint32_t>(order.size()), order.push_back(e.target);
    }
  }
  for (uint32_t s : order) {
    out.push_back(d.states()[s].final ? 1 : 0);
    for (const auto& e : d.states()[s].edges) out.insert(out.end(), {e.lo, e.hi, id[e.target]});
    out.push_back(UINT32_MAX);
  }
  return out;
}

const std::vector<std::pair<uint32_t, uint32_t>> kBounds{{0, 0}, {0, 1}, {1, 3}, {2, 5}, {0, 9}, {3, 3},
                                                         {5, 40}, {0, kUnbounded}, {2, kUnbounded}, {4, 2}};

TEST(CharDfaLengthRange, OperationsGiveWhatTheChainGives) {
  const std::vector<CharDfa> languages{
      CharDfa::none(), CharDfa::all(), CharDfa::literal(""), re("[a-c]+x?"), re("(ab)*|c"), re("a{3,7}b*"),
      re("[^@]+@[a-z]+(\\.[a-z]+)*"), CharDfa::literals({"a", "ab", "abc", "\xc3\xa9", "\xf0\x9f\x98\x80xyz"}),
      CharDfa::literal("ab").complement(), CharDfa::length(1, 4), CharDfa::length(3, kUnbounded)};
  const std::vector<std::string> texts{"", "a", "ab", "abc", "abcx", "\xc3\xa9", "a@b.c", "aaab", "xxxxxxx",
                                       "\xf0\x9f\x98\x80xyz", "\xff", "abababababababababab", "\xed\xa0\x80"};
  for (const auto& [lo, hi] : kBounds) {
    const CharDfa chain = CharDfa::length(lo, hi);
    const CharDfa range = CharDfa::length_range(lo, hi);
    const std::string where = std::to_string(lo) + ".." + std::to_string(hi);
    EXPECT_EQ(form(range), form(chain)) << where;
    EXPECT_EQ(range.size(), chain.size()) << where;
    EXPECT_EQ(range.empty(), chain.empty()) << where;
    EXPECT_EQ(range.only_empty_string(), chain.only_empty_string()) << where;
    std::string one, other;
    EXPECT_EQ(range.single_string(one), chain.single_string(other)) << where;
    EXPECT_EQ(one, other) << where;
    EXPECT_EQ(form(range.complement()), form(chain.complement())) << where;
    EXPECT_EQ(form(range.minimized()), form(chain)) << where;
    for (const auto& t : texts) EXPECT_EQ(range.accepts(t), chain.accepts(t)) << where << " " << t;
    for (size_t i = 0; i < languages.size(); ++i) {
      const CharDfa& x = languages[i];
      const std::string at = where + " language " + std::to_string(i);
      EXPECT_EQ(form(CharDfa::intersect(x, range)), form(CharDfa::intersect(x, chain))) << at;
      EXPECT_EQ(form(CharDfa::intersect(range, x)), form(CharDfa::intersect(chain, x))) << at;
      EXPECT_EQ(form(CharDfa::unite(x, range)), form(CharDfa::unite(x, chain))) << at;
      EXPECT_EQ(form(CharDfa::unite(range, x)), form(CharDfa::unite(chain, x))) << at;
      if (x.words()) {
        EXPECT_EQ(*CharDfa::intersect(x, range).words(), *CharDfa::intersect(x, chain).words()) << at;
      }
    }
    for (const auto& [lo2, hi2] : kBounds) {  // two lengths: the common lengths, or one range for both
      const CharDfa other = CharDfa::length_range(lo2, hi2);
      const std::string at = where + " and " + std::to_string(lo2) + ".." + std::to_string(hi2);
      const CharDfa both = CharDfa::intersect(range, other), either = CharDfa::unite(range, other);
      EXPECT_EQ(form(both), form(CharDfa::intersect(chain, CharDfa::length(lo2, hi2)))) << at;
      EXPECT_EQ(form(either), form(CharDfa::unite(chain, CharDfa::length(lo2, hi2)))) << at;
      if (lo2 <= hi2 && lo <= hi) {
        EXPECT_TRUE(both.chainless() || both.empty()) << at;
        EXPECT_EQ(form(CharDfa::intersect(range, CharDfa::length(lo2, hi2))), form(both)) << at;
      }
    }
  }
}

// Bounds of any size cost nothing until a chain is asked for; the chain keeps the limit.
TEST(CharDfaLengthRange, HugeBoundsStayBoundsUntilStatesAreNeeded) {
  const CharDfa huge = CharDfa::length_range(0, 5'000'000);
  EXPECT_TRUE(huge.chainless());
  ASSERT_TRUE(huge.lengths());
  EXPECT_EQ(*huge.lengths(), std::make_pair(0u, 5'000'000u));
  EXPECT_EQ(huge.size(), 5'000'001u);
  EXPECT_THROW((void)huge.states(), std::logic_error);
  EXPECT_THROW((void)huge.with_states(), AutomatonLimitError);
  EXPECT_THROW((void)automaton_expr(std::make_shared<const CharDfa>(huge), true), AutomatonLimitError);
  EXPECT_TRUE(huge.accepts(std::string(4'000'000, 'a')));
  EXPECT_FALSE(huge.accepts(std::string(5'000'001, 'a')));
  // With another length: bounds again; with a small language: the product of its layers.
  const CharDfa common = CharDfa::intersect(huge, CharDfa::length_range(4'000'000, kUnbounded));
  ASSERT_TRUE(common.chainless());
  EXPECT_EQ(*common.lengths(), std::make_pair(4'000'000u, 5'000'000u));
  EXPECT_EQ(*CharDfa::unite(huge, CharDfa::length_range(5'000'001, kUnbounded)).lengths(),
            std::make_pair(0u, kUnbounded));
  // The complement holds strings with surrogates, which no length automaton reads: it
  // needs the chain.
  EXPECT_THROW((void)huge.complement(), AutomatonLimitError);
  const CharDfa outside = CharDfa::length_range(0, 3).complement();
  EXPECT_TRUE(std::ranges::any_of(outside.states()[0].edges,
                                  [](const CharDfa::Edge& e) { return e.lo <= 0xD800 && 0xD800 <= e.hi; }));
  const CharDfa words = CharDfa::intersect(CharDfa::literals({"a", "bb"}), huge);
  ASSERT_NE(words.words(), nullptr);
  EXPECT_EQ(words.words()->size(), 2u);
  const CharDfa cut = CharDfa::intersect(re("x(yz)*"), CharDfa::length_range(0, 6));
  EXPECT_FALSE(cut.chainless());
  EXPECT_TRUE(cut.accepts("xyzyz"));
  EXPECT_FALSE(cut.accepts("xyzyzyz"));
  // Two ranges apart are not one range: the union is built from the chains.
  EXPECT_THROW((void)CharDfa::unite(huge, CharDfa::length_range(6'000'000, 7'000'000)), AutomatonLimitError);
  const CharDfa apart = CharDfa::unite(CharDfa::length_range(0, 600), CharDfa::length_range(700, 800));
  EXPECT_FALSE(apart.chainless());
  EXPECT_TRUE(apart.accepts(std::string(750, 'q')));
  EXPECT_FALSE(apart.accepts(std::string(650, 'q')));
  // Embedded into a grammar, a small range is its chain.
  const Expr e = automaton_expr(std::make_shared<const CharDfa>(CharDfa::length_range(2, 3)), false);
  ASSERT_TRUE(e.automaton);
  EXPECT_FALSE(e.automaton->chainless());
  EXPECT_EQ(e.automaton->size(), 4u);
}

}  // namespace
}  // namespace lockstep
