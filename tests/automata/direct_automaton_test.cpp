// Whole-rule automata (JSON Schema strings, patterns) are built directly as byte DFAs; the
// result must be the language the Thompson-NFA path gives (checked by walking both DFAs in
// product, rule edges as symbols), and minimal; with the calls of escape rules too.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "automata/grammar_automaton.h"
#include "automata/json_escapes.h"
#include "automata/rule_automaton.h"
#include "grammar/char_dfa.h"

namespace lockstep {
namespace {

// Follows symbol c from state s (or UINT32_MAX): a byte below 256, else rule c - 256.
uint32_t step(const RuleDfa& d, uint32_t s, unsigned c) {
  for (uint32_t k = d.byte_begin[s]; k < d.byte_begin[s + 1] && c < 256; ++k) {
    if (d.bytes[k].lo <= c && c <= d.bytes[k].hi) return d.bytes[k].target;
  }
  for (uint32_t k = d.rule_begin[s]; k < d.rule_begin[s + 1]; ++k) {
    if (d.rules[k].rule + 256 == c) return d.rules[k].target;
  }
  return UINT32_MAX;
}

// Language equality of two DFAs over bytes and rule symbols (dead ends count as rejecting).
bool same_language(const RuleDfa& a, const RuleDfa& b, std::string& witness) {
  std::set<unsigned> symbols;
  for (unsigned c = 0; c < 256; ++c) symbols.insert(c);
  for (const auto* d : {&a, &b}) {
    for (const auto& e : d->rules) symbols.insert(e.rule + 256);
  }
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
    for (const unsigned c : symbols) {
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
  std::vector<char> productive;  // every rule called (an escape rule reads something)
  for (const auto& e : d.rules) productive.resize(std::max<size_t>(productive.size(), e.rule + 1), 1);
  if (auto t = trimmed(d, productive)) return std::move(*t);
  return d;
}

// Escape rules numbered in order of first request (both builders must call the same ones).
struct EscapeNumbers {
  std::map<std::vector<uint32_t>, uint32_t> ids;
  EscapeRuleFn spelled, by_rule;  // \uXXXX spelled out, or read by the rules too
  // The same, with the memo of shapes a grammar's compilation keeps (shared by every
  // automaton built with it, as by a grammar's rules).
  EscapeRuleFn spelled_memo, by_rule_memo;
  EscapeNumbers() {
    auto fn = [this](const std::vector<CodepointRange>& ranges) {
      std::vector<uint32_t> key;
      for (const auto& r : ranges) key.insert(key.end(), {r.lo, r.hi});
      return ids.try_emplace(key, static_cast<uint32_t>(ids.size())).first->second;
    };
    spelled = {fn, false, nullptr};
    by_rule = {fn, true, nullptr};
    spelled_memo = {fn, false, make_direct_shape_memo()};
    by_rule_memo = {fn, true, make_direct_shape_memo()};
  }
};

void expect_equivalent(const CharDfa& dfa, bool json, const std::string& what, const EscapeRuleFn* escapes = nullptr) {
  auto shared = std::make_shared<const CharDfa>(dfa.minimized());
  Rule direct{"direct", automaton_expr(shared, json), {}, true};
  Expr wrapped;  // a sequence (built by hand: Expr::sequence unwraps one child) takes the NFA path
  wrapped.kind = Expr::Kind::kSequence;
  wrapped.children = {automaton_expr(shared, json)};
  Rule thompson{"thompson", wrapped, {}, true};
  const RuleDfa a = determinize_rule(direct, 1u << 20, nullptr, escapes);
  const RuleDfa b = minimize(determinize_rule(thompson, 1u << 20, nullptr, escapes));
  std::string witness;
  EXPECT_TRUE(same_language(live(a), live(b), witness))
      << what << (json ? " (JSON string)" : "") << ": the languages differ on bytes of length " << witness.size();
  EXPECT_EQ(minimize(a).size(), a.size()) << what << ": not minimal";
}

// The same automaton state for state and edge for edge.
void expect_same_states(const RuleDfa& a, const RuleDfa& b, const std::string& what) {
  EXPECT_EQ(a.final, b.final) << what;
  EXPECT_EQ(a.byte_begin, b.byte_begin) << what;
  EXPECT_EQ(a.rule_begin, b.rule_begin) << what;
  ASSERT_EQ(a.bytes.size(), b.bytes.size()) << what;
  for (size_t k = 0; k < a.bytes.size(); ++k) {
    ASSERT_TRUE(a.bytes[k].lo == b.bytes[k].lo && a.bytes[k].hi == b.bytes[k].hi && a.bytes[k].target == b.bytes[k].target)
        << what << ", byte edge " << k;
  }
  ASSERT_EQ(a.rules.size(), b.rules.size()) << what;
  for (size_t k = 0; k < a.rules.size(); ++k) {
    ASSERT_TRUE(a.rules[k].rule == b.rules[k].rule && a.rules[k].target == b.rules[k].target)
        << what << ", rule edge " << k;
  }
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

TEST(DirectAutomaton, EscapeCallsSameAsTheNfaPath) {
  EscapeNumbers escapes;
  const std::vector<std::string> patterns = {
      ".{0,20}", "[^\"\\\\]*", "(?:[\\u00e9\\u4e2d\\u{1F600}]|ab)*", "x|\\u0080|\\u0800|\\u{10000}", ".*",
      "[\\u{1F600}-\\u{1F64F}]{1,3}", "\\u{1F600}a|\\u{1F601}b", "[\\u{10000}-\\u{1F5FF}\\u{1F601}-\\u{10FFFF}]+"};
  CharDfa names = CharDfa::literal("api");
  for (const char* n : {"apiVersion", "kind", "metadata", "x-y", "\xc3\xa9t\xc3\xa9"}) names = CharDfa::unite(names, CharDfa::literal(n));
  for (const EscapeRuleFn* fn : {&escapes.spelled, &escapes.by_rule, &escapes.spelled_memo, &escapes.by_rule_memo}) {
    for (const auto& p : patterns) expect_equivalent(CharDfa::from_expr(regex_to_expr(p)), true, p, fn);
    expect_equivalent(CharDfa::length(2, 40), true, "length 2..40", fn);
    expect_equivalent(names.complement(), true, "complement of names", fn);
  }
  EXPECT_GE(escapes.ids.size(), 8u);  // every code point, and the patterns' and names' own sets
  // Above U+FFFF, a string automaton always calls escape rules, from the state after the
  // backslash: the calls add no state. Read by the rules up to U+FFFF too, a position's
  // escapes cost nothing beyond that state, where spelling them out takes "\u", "\u0", "\u00"
  // and the third digit's state for each of its targets.
  for (const uint32_t n : {3u, 40u}) {
    const Rule rule{"s", automaton_expr(std::make_shared<const CharDfa>(CharDfa::length(0, n)), true), {}, true};
    const RuleDfa spelled = determinize_rule(rule, 1u << 20, nullptr, &escapes.spelled);
    const RuleDfa by_rule = determinize_rule(rule, 1u << 20, nullptr, &escapes.by_rule);
    const RuleDfa plain = determinize_rule(rule, 1u << 20);
    EXPECT_EQ(spelled.rules.size(), n) << "one call per position that can read a code point";
    EXPECT_EQ(by_rule.rules.size(), n);
    EXPECT_TRUE(plain.rules.empty());
    EXPECT_EQ(spelled.size(), plain.size()) << "the calls add no state";
    EXPECT_LE(by_rule.size() + 4 * n, spelled.size());
  }
  const Rule keys{"k", automaton_expr(std::make_shared<const CharDfa>(names.complement()), true), {}, true};
  EXPECT_LE(determinize_rule(keys, 1u << 20, nullptr, &escapes.by_rule).size() + 3 * names.complement().size(),
            determinize_rule(keys, 1u << 20, nullptr, &escapes.spelled).size());
}

// The compiler skips trimmed() for a whole-rule automaton built from a code-point automaton known
// minimal and not empty (grammar_compiler.cpp, built_trim): every state of it must reach a
// final state, with escape rules spelled out or called.
TEST(DirectAutomaton, BuiltFromAMinimalAutomatonNoStateIsDead) {
  EscapeNumbers escapes;
  std::vector<std::pair<std::string, CharDfa>> automata;
  for (const char* p : {".{0,20}", "[a-z]+", "(foo|bar|baz)", "\\p{L}{2,5}", "[^\"\\\\]*", "\\d{3}-\\d{4}",
                        "(?:[\\u00e9\\u4e2d\\u{1F600}]|ab)*", "x|\\u0080|\\u0800|\\u{10000}", "[\\u{1F600}-\\u{1F64F}]{1,3}"}) {
    automata.emplace_back(p, CharDfa::from_expr(regex_to_expr(p)));
  }
  CharDfa names = CharDfa::sorted_literals({"api", "apiVersion", "kind", "metadata", "x-y", "\xc3\xa9t\xc3\xa9"});
  automata.emplace_back("names", names);
  automata.emplace_back("complement of names", names.complement());
  automata.emplace_back("length 2..40", CharDfa::length(2, 40));
  automata.emplace_back("names of length 4..8", CharDfa::intersect(names, CharDfa::length(4, 8)));
  for (const auto& [what, d] : automata) {
    ASSERT_TRUE(d.known_minimal()) << what;
    ASSERT_FALSE(d.empty()) << what;
    const auto shared = std::make_shared<const CharDfa>(d);
    for (const bool json : {false, true}) {
      const Rule rule{"s", automaton_expr(shared, json), {}, true};
      for (const EscapeRuleFn* fn : std::vector<const EscapeRuleFn*>{nullptr, &escapes.spelled, &escapes.by_rule}) {
        const RuleDfa a = determinize_rule(rule, 1u << 20, nullptr, json ? fn : nullptr);
        EXPECT_EQ(live(a).size(), a.size()) << what << (json ? " (JSON string)" : "");
      }
    }
  }
}

// A grammar's memo of shapes (EscapeRuleFn::shapes) changes nothing in the automata: each
// built with the memo, for the first time or again after other automata filled it, is the
// one built without it, state for state and edge for edge.
TEST(DirectAutomaton, ShapeMemoGivesTheSameAutomata) {
  EscapeNumbers escapes;
  CharDfa names = CharDfa::literal("api");
  for (const char* n : {"apiVersion", "kind", "metadata", "x-y", "\xc3\xa9t\xc3\xa9"}) names = CharDfa::unite(names, CharDfa::literal(n));
  std::vector<CharDfa> automata = {names, names.complement(), CharDfa::length(0, 12), CharDfa::length(2, 5)};
  for (const char* p : {"[a-z]{1,6}", "\\d{3}-\\d{4}", "[\\u{1F600}-\\u{1F64F}]{1,3}", "(?:[\\u00e9\\u4e2d]|ab)*"}) {
    automata.push_back(CharDfa::from_expr(regex_to_expr(p)).minimized());
  }
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < automata.size(); ++i) {
      for (const bool json : {false, true}) {
        const Rule rule{"r", automaton_expr(std::make_shared<const CharDfa>(automata[i]), json), {}, true};
        for (const auto& [plain, memo] : {std::pair{&escapes.spelled, &escapes.spelled_memo},
                                          std::pair{&escapes.by_rule, &escapes.by_rule_memo}}) {
          const RuleDfa a = determinize_rule(rule, 1u << 20, nullptr, plain);
          const RuleDfa b = determinize_rule(rule, 1u << 20, nullptr, memo);
          expect_same_states(a, b, fmt::format("automaton {} (json {}, bmp {}, round {})", i, json, plain->bmp, round));
        }
      }
    }
  }
}

// The templates prepared with the JSON building blocks (made from stand-in targets) give a
// name trie and its complement the automata built without them. Each test runs in a process
// of its own: here the prepared templates are the only ones in the cache.
TEST(DirectAutomaton, PreparedKeyTemplatesGiveTheSameAutomata) {
  prepare_key_templates();
  EscapeNumbers escapes;
  CharDfa names = CharDfa::literal("q");
  for (const char* n : {"zap", "k~y", "a b", "x-1", "{}", "~"}) names = CharDfa::unite(names, CharDfa::literal(n));
  for (const EscapeRuleFn* fn : {&escapes.spelled, &escapes.by_rule}) {
    expect_equivalent(names, true, "names", fn);
    expect_equivalent(names.complement(), true, "complement of names", fn);
  }
}

// With escape rules for every \u spelling, a state reading printable ASCII only, or ASCII
// and every code point from U+0080 on into one target (a position in the complement of a
// name trie), is built without its shape's template (EscapeRuleFn::direct_ascii): the
// automaton is the one the templates give, state for state. Word lists over printable ASCII
// with the bytes a JSON string reads apart (the quote, the backslash, the slash, DEL), their
// complements (control characters and their short escapes, the UTF-8 sequences past ASCII),
// ranges across them, states that read more than ASCII among them, and length-counted
// strings, whose states repeat each shape at every position (built once per shape).
TEST(DirectAutomaton, PrintableStatesWithoutTemplatesAreTheTemplatesAutomata) {
  EscapeNumbers escapes;
  EscapeRuleFn templates = escapes.by_rule;
  templates.direct_ascii = false;
  ASSERT_TRUE(escapes.by_rule.direct_ascii);
  std::vector<CharDfa> automata;
  uint64_t seed = 88172645463325252ull;
  auto next = [&] {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
  };
  const std::string alphabet = "\"\\/ !#[]^_`az{|}~\x7f" "09AZ.-";
  for (int k = 0; k < 40; ++k) {
    std::vector<std::string> words;
    const size_t n = 1 + next() % 60;
    for (size_t i = 0; i < n; ++i) {
      std::string w;
      const size_t len = next() % 7;
      for (size_t j = 0; j < len; ++j) w += alphabet[next() % alphabet.size()];
      if (k % 4 == 3 && next() % 5 == 0) w += "\xc3\xa9";  // a state reading beyond ASCII
      words.push_back(w);
    }
    automata.push_back(CharDfa::literals(words));
    if (k % 5 == 0) automata.push_back(automata.back().complement());
  }
  for (const char* p : {"[ -~]{0,5}", "[!-\\[\\]-~]+", "[\"\\\\/]{1,3}x", "[#-/]*[\\\\-\\x7f]?", "(?:a|[\\x20-\\x7f]b)*"}) {
    automata.push_back(CharDfa::from_expr(regex_to_expr(p)).minimized());
  }
  // Length-counted strings of a thousand states and more, whose printable states are built
  // once per shape and then instantiated with their targets.
  automata.push_back(CharDfa::with_length(CharDfa::from_expr(regex_to_expr("[a-c\"\\\\]+(\\.[a-c/]+)*@[a-z]+")), 3, 255));
  automata.push_back(CharDfa::with_length(CharDfa::literals({"ab", "b~"}).complement(), 0, 1500));
  ASSERT_GT(automata[automata.size() - 2].size(), 1024u);
  ASSERT_GT(automata.back().size(), 1024u);
  size_t printable = 0, tail = 0;
  for (size_t i = 0; i < automata.size(); ++i) {
    for (const auto& st : automata[i].states()) {
      printable += !st.edges.empty() && st.edges.front().lo >= 0x20 && st.edges.back().hi <= 0x7F;
      tail += !st.edges.empty() && st.edges.back().lo <= 0x80 && st.edges.back().hi == kMaxCodepoint;
    }
    const Rule rule{"r", automaton_expr(std::make_shared<const CharDfa>(automata[i]), true), {}, true};
    const RuleDfa direct = determinize_rule(rule, 1u << 20, nullptr, &escapes.by_rule);
    const RuleDfa by_template = determinize_rule(rule, 1u << 20, nullptr, &templates);
    expect_same_states(direct, by_template, fmt::format("automaton {}", i));
    expect_equivalent(automata[i], true, fmt::format("automaton {}", i), &escapes.by_rule);
  }
  EXPECT_GT(printable, 500u);  // the states the direct build takes
  EXPECT_GT(tail, 50u);
}

// The cost model (escapes_by_rule): escape rules for grammars whose strings have many
// positions per distinct set of code points, spelled out for a few names.
TEST(DirectAutomaton, EscapeRulesWhereTheyPay) {
  const auto grammar_of = [](const CharDfa& d) {
    Grammar g;
    g.add_rule("root", automaton_expr(std::make_shared<const CharDfa>(d), true));
    return g;
  };
  EXPECT_FALSE(escapes_by_rule(grammar_of(CharDfa::length(0, 3))));
  EXPECT_FALSE(escapes_by_rule(grammar_of(CharDfa::all())));
  EXPECT_TRUE(escapes_by_rule(grammar_of(CharDfa::length(0, 40))));
  CharDfa few = CharDfa::literal("date");
  for (const char* n : {"amount", "due", "currency"}) few = CharDfa::unite(few, CharDfa::literal(n));
  EXPECT_FALSE(escapes_by_rule(grammar_of(few.complement())));
  CharDfa many = CharDfa::literal("name0");
  for (int i = 1; i < 300; ++i) many = CharDfa::unite(many, CharDfa::literal(fmt::format("name{}", i * 7919 % 100000)));
  EXPECT_TRUE(escapes_by_rule(grammar_of(many)));
}

}  // namespace
}  // namespace lockstep
