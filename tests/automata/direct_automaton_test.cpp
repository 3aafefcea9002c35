// Whole-rule automata (JSON Schema strings, patterns) are built directly as byte DFAs; the
// result must be the language the Thompson-NFA path gives (checked by walking both DFAs in
// product), and minimal.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "automata/rule_automaton.h"
#include "grammar/char_dfa.h"

namespace lockstep {
namespace {

// Follows byte b from state s (or UINT32_MAX).
uint32_t step(const RuleDfa& d, uint32_t s, unsigned b) {
  for (uint32_t k = d.byte_begin[s]; k < d.byte_begin[s + 1]; ++k) {
    if (d.bytes[k].lo <= b && b <= d.bytes[k].hi) return d.bytes[k].target;
  }
  return UINT32_MAX;
}

// Language equality of two DFAs without rule edges (dead ends count as rejecting).
bool same_language(const RuleDfa& a, const RuleDfa& b, std::string& witness) {
  std::map<std::pair<uint32_t, uint32_t>, std::string> seen;
  std::vector<std::pair<uint32_t, uint32_t>> todo{{0, 0}};
  seen[{0, 0}] = "";
  while (!todo.empty()) {
    const auto [x, y] = todo.back();
    todo.pop_back();
    const std::string path = seen[{x, y}];
    const bool fa = x != UINT32_MAX && a.final[x], fb = y != UINT32_MAX && b.final[y];
    if (fa != fb) {
      witness = path;
      return false;
    }
    for (unsigned c = 0; c < 256; ++c) {
      const uint32_t nx = x == UINT32_MAX ? x : step(a, x, c), ny = y == UINT32_MAX ? y : step(b, y, c);
      if (nx == UINT32_MAX && ny == UINT32_MAX) continue;
      if (seen.emplace(std::make_pair(nx, ny), path + static_cast<char>(c)).second) todo.push_back({nx, ny});
    }
  }
  return true;
}

// A state from which nothing is accepted (the NFA path's dead ends) must be treated as
// rejection: `same_language` walks into UINT32_MAX only when both miss, so trim first.
RuleDfa live(RuleDfa d) {
  trim(d, {});
  return d;
}

void expect_equivalent(const CharDfa& dfa, bool json, const std::string& what) {
  auto shared = std::make_shared<const CharDfa>(dfa.minimized());
  Rule direct{"direct", automaton_expr(shared, json), {}, true};
  Expr wrapped;  // a sequence (built by hand: Expr::sequence unwraps one child) takes the NFA path
  wrapped.kind = Expr::Kind::kSequence;
  wrapped.children = {automaton_expr(shared, json)};
  Rule thompson{"thompson", wrapped, {}, true};
  const RuleDfa a = determinize_rule(direct, 1u << 20);
  const RuleDfa b = minimize(determinize_rule(thompson, 1u << 20));
  std::string witness;
  EXPECT_TRUE(same_language(live(a), live(b), witness))
      << what << (json ? " (JSON string)" : "") << ": the languages differ on bytes of length " << witness.size();
  EXPECT_EQ(minimize(a).size(), a.size()) << what << ": not minimal";
}

TEST(DirectAutomaton, SameLanguageAsTheNfaPathAndMinimal) {
  const std::vector<std::string> patterns = {
      ".{0,20}", "[a-z]+", "(foo|bar|baz)", "\\p{L}{2,5}", "[^\"\\\\]*", "\\d{3}-\\d{4}", "[\\u0000-\\u001f]",
      "(?:[\\u00e9\\u4e2d\\u{1F600}]|ab)*", "x|\\u0080|\\u0800|\\u{10000}", ".*"};
  for (const auto& p : patterns) {
    const CharDfa d = CharDfa::from_expr(regex_to_expr(p));
    expect_equivalent(d, false, p);
    expect_equivalent(d, true, p);
  }
  // Keys other than a few names (additionalProperties next to properties).
  CharDfa names = CharDfa::literal("authMode");
  for (const char* n : {"email", "name", "surname", "password", "\xc3\xa9t\xc3\xa9"}) {
    names = CharDfa::unite(names, CharDfa::literal(n));
  }
  expect_equivalent(names.complement(), true, "complement of names");
  expect_equivalent(CharDfa::length(2, 40), true, "length 2..40");
}

}  // namespace
}  // namespace lockstep
