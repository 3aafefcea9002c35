// Hostile grammars and regexes: each compiles within the engine limits or fails with the
// LimitError naming the limit and the place — never a hang, never unbounded memory.
#include <functional>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "automata/matcher.h"
#include "grammar/char_dfa.h"
#include "grammar/diagnostics.h"
#include "grammar/limits.h"

namespace lockstep {
namespace {

std::shared_ptr<const Vocabulary> small_vocab(std::vector<std::string> tokens) {
  tokens.insert(tokens.begin(), "</s>");
  std::vector<TokenKind> kinds(tokens.size(), TokenKind::kText);
  return std::make_shared<Vocabulary>(tokens, kinds, std::vector<int32_t>{0});
}

using ScopedLimits = ScopedEngineLimits;

bool matches(const std::shared_ptr<const GrammarAutomaton>& g, const std::string& text) {
  auto vocab = small_vocab({"x"});
  EarleyMatcher m(g, vocab);
  if (!m.accept_bytes(text)) return false;
  std::vector<uint32_t> mask(vocab->bitmask_words());
  m.fill_next_token_bitmask(mask);
  return (mask[0] & 1u) != 0;  // end of sequence allowed
}

// Runs `f`, which must throw LimitError for `limit`; returns the error's line:column.
template <typename F>
SourceLocation expect_limit(F&& f, const std::string& limit) {
  try {
    f();
    ADD_FAILURE() << "no LimitError " << limit;
  } catch (const LimitError& e) {
    EXPECT_EQ(e.limit(), limit) << e.what();
    EXPECT_NE(std::string(e.what()).find(limit), std::string::npos) << e.what();
    return e.location().source.value_or(SourceLocation{});
  }
  return {};
}

TEST(HostileGrammar, NestedCountedRepetitionIsOneCount) {
  // (C{m1,n1}){m2,n2} is C{m1·m2, n1·n2} when every count in between is a sum of counts.
  const Expr e = Expr::repeat(Expr::repeat(Expr::literal("a"), 1, 300), 1, 300);
  ASSERT_EQ(e.kind, Expr::Kind::kRepeat);
  EXPECT_EQ(e.min, 1u);
  EXPECT_EQ(e.max, 90000u);
  EXPECT_EQ(e.children[0].kind, Expr::Kind::kLiteral);
  const Expr star = Expr::repeat(Expr::repeat(Expr::literal("a"), 1, kUnbounded), 0, kUnbounded);
  EXPECT_EQ(star.min, 0u);
  EXPECT_EQ(star.max, kUnbounded);
  // Not one interval: (a{3}){1,2} is a{3} or a{6}; (a{2,3}){0,2} misses a{1}.
  EXPECT_EQ(Expr::repeat(Expr::repeat(Expr::literal("a"), 3, 3), 1, 2).children[0].kind, Expr::Kind::kRepeat);
  EXPECT_EQ(Expr::repeat(Expr::repeat(Expr::literal("a"), 2, 3), 0, 2).children[0].kind, Expr::Kind::kRepeat);
  // The languages agree with the nested form.
  auto g = GrammarAutomaton::compile(parse_gbnf("root ::= (\"ab\"{2,3}){1,2}"));
  for (int n = 0; n <= 7; ++n) {
    std::string text;
    for (int i = 0; i < n; ++i) text += "ab";
    EXPECT_EQ(matches(g, text), n >= 2 && n <= 6) << n;
  }
  auto gaps = GrammarAutomaton::compile(parse_gbnf("root ::= (\"a\"{3}){1,2}"));
  EXPECT_TRUE(matches(gaps, "aaa"));
  EXPECT_FALSE(matches(gaps, "aaaa"));
  EXPECT_TRUE(matches(gaps, "aaaaaa"));
}

TEST(HostileGrammar, NestedRepetitionCompilesOrFailsWithALimit) {
  auto g = GrammarAutomaton::compile(parse_regex("(a{1,300}){1,300}"));
  EXPECT_TRUE(matches(g, std::string(1000, 'a')));
  // GBNF as well (`("a"{1,1000}){1,1000}`, a{1,1000000}, takes seconds: smaller here).
  auto gbnf = GrammarAutomaton::compile(parse_gbnf("root ::= (\"a\"{1,100}){1,100}"));
  EXPECT_TRUE(matches(gbnf, std::string(5000, 'a')));
  EXPECT_FALSE(matches(gbnf, std::string(10001, 'a')));
}

TEST(HostileGrammar, SetSizeLimitNamesTheRule) {
  EngineLimits small = engine_limits();
  small.automaton_state_set = 200000;
  ScopedLimits scoped(small);
  CompileLimits no_inlining;
  no_inlining.inline_rules = false;
  const SourceLocation at = expect_limit(
      [&] { GrammarAutomaton::compile(parse_gbnf("root ::= list\n\nlist ::= [ab]* \"a\" [ab]{20}"), no_inlining); },
      "automaton_state_set");
  EXPECT_EQ(at.line, 3u);
  EXPECT_EQ(at.column, 1u);
}

TEST(HostileGrammar, ExponentialDfaFailsWithTheStateLimit) {
  // (a|b)*a(a|b){25}: a DFA of 2^26 states. Lowered limits keep the test fast.
  EngineLimits small = engine_limits();
  small.rule_automaton_states = 20000;
  ScopedLimits scoped(small);
  const std::string limit_hit = [] {
    try {
      GrammarAutomaton::compile(parse_regex("(a|b)*a(a|b){25}"));
    } catch (const LimitError& e) {
      EXPECT_EQ(e.location().source.value_or(SourceLocation{}).line, 1u) << e.what();
      return e.limit();
    }
    return std::string();
  }();
  EXPECT_TRUE(limit_hit == "rule_automaton_states" || limit_hit == "automaton_state_set") << limit_hit;
}

TEST(HostileGrammar, InliningThatGrowsTooBigFallsBackToCalls) {
  // `big` inlined into `root` twice needs more states than a rule may have; kept as calls
  // it fits.
  EngineLimits small = engine_limits();
  small.rule_automaton_states = 3000;
  ScopedLimits scoped(small);
  auto g = GrammarAutomaton::compile(parse_gbnf("root ::= big \"-\" big\nbig ::= [a-z]{1,1000}"));
  EXPECT_TRUE(matches(g, "abc-de"));
}

TEST(HostileGrammar, HundredThousandAlternativesGiveMasks) {
  std::string text = "root ::= ";
  for (int i = 0; i < 100000; ++i) text += (i ? " | \"w" : "\"w") + std::to_string(i) + "\"";
  auto g = GrammarAutomaton::compile(parse_gbnf(text));
  auto vocab = small_vocab({"w", "w1", "w99", "w100000", "9", "0"});
  EarleyMatcher m(g, vocab);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b0001110u);  // "w", "w1", "w99"; not "w100000"
  ASSERT_TRUE(m.accept_token(2));  // "w1"
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b1100001u);  // EOS ("w1"), "9", "0"
  ASSERT_TRUE(m.accept_token(5));  // "w19"
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b1100001u);  // EOS, "w199", "w190"
}

// Each alternative a rule of its own that calls itself: every set after "(" holds an item
// per alternative. Completion into such a set, and the context of each rule started there,
// cost the items waiting on that rule (was a scan of the set per rule: quadratic), and each
// automaton state's mask walk starts from that state alone (was the root's whole first set).
TEST(HostileGrammar, TwentyThousandRecursiveAlternativesGiveMasks) {
  const int n = 20000;
  std::string text = "root ::= ";
  for (int i = 0; i < n; ++i) text += (i ? " | r" : "r") + std::to_string(i);
  text += "\n";
  for (int i = 0; i < n; ++i) {
    text += "r" + std::to_string(i) + " ::= \"w" + std::to_string(i) + "\" | \"(\" r" + std::to_string(i) + " \")\"\n";
  }
  auto g = GrammarAutomaton::compile(parse_gbnf(text));
  auto vocab = small_vocab({"(", ")", "w1", "w19", "w20000", "9", "))"});
  EarleyMatcher m(g, vocab);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b00011010u);  // "(", "w1", "w19"; not "w20000", ")"
  ASSERT_TRUE(m.accept_token(1));   // "("
  ASSERT_TRUE(m.accept_token(1));   // "(("
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b00011010u);
  ASSERT_TRUE(m.accept_token(3));   // "((w1"
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b11000100u);  // ")", "9" (w19), "))"; not EOS
  ASSERT_TRUE(m.accept_token(7));   // "((w1))"
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b00000001u);  // EOS only
  m.rollback(1);
  ASSERT_TRUE(m.accept_token(6));   // "((w19"
  ASSERT_TRUE(m.accept_token(2));   // "((w19)"
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b00000100u);  // ")" only
}

TEST(HostileGrammar, HundredThousandRuleChainValidatesAndCompiles) {
  // r_i ::= r_{i+1} "x", defined callee-last and (second) callee-first.
  for (bool reversed : {false, true}) {
    const int n = 100000;
    std::string text = "root ::= r0\n";
    for (int k = 0; k < n; ++k) {
      const int i = reversed ? n - 1 - k : k;
      text += "r" + std::to_string(i) + " ::= " + (i + 1 < n ? "r" + std::to_string(i + 1) + " " : "") + "\"x\"\n";
    }
    Grammar grammar = parse_gbnf(text);
    EXPECT_TRUE(grammar.warnings.empty());
    auto g = GrammarAutomaton::compile(std::move(grammar));
    EXPECT_TRUE(matches(g, std::string(n, 'x'))) << reversed;
    EXPECT_FALSE(matches(g, std::string(n - 1, 'x'))) << reversed;
  }
}

TEST(HostileGrammar, LongUnproductiveChainIsOneError) {
  // Every rule of the chain depends on a loop at its end: the root derives nothing, and the
  // error names the loop, found in linear time.
  const int n = 100000;
  std::string text = "root ::= r0\n";
  for (int i = 0; i < n; ++i) text += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + " \"x\"\n";
  text += "r" + std::to_string(n) + " ::= \"y\" r" + std::to_string(n) + "\n";
  try {
    parse_gbnf(text);
    ADD_FAILURE();
  } catch (const GrammarError& e) {
    EXPECT_NE(std::string(e.what()).find("rule 'r100000' can never match"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().line, static_cast<uint32_t>(n + 2));
  }
}

TEST(UnproductiveRules, AreWarningsWhenTheRootDoesWithoutThem) {
  Grammar grammar = parse_gbnf("root ::= \"a\" | loop\nloop ::= \"b\" loop\n");
  ASSERT_EQ(grammar.warnings.size(), 1u);
  EXPECT_EQ(grammar.warnings[0].rule, "loop");
  EXPECT_EQ(grammar.warnings[0].where.line, 2u);
  EXPECT_EQ(grammar.warnings[0].where.column, 1u);
  EXPECT_NE(grammar.warnings[0].message.find("rule 'loop' can never finish"), std::string::npos);
  auto g = GrammarAutomaton::compile(std::move(grammar));
  EXPECT_EQ(g->grammar().warnings.size(), 1u);  // validated again, not warned twice
  EXPECT_TRUE(matches(g, "a"));
  EXPECT_FALSE(matches(g, "b"));
  auto vocab = small_vocab({"a", "b", "bb"});
  EarleyMatcher m(g, vocab);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b0010u);  // only "a"
}

// validate() and prune_unproductive() mark what they checked, so compiling the grammar does
// not walk it again; a rule added afterwards clears the mark and is checked.
TEST(UnproductiveRules, ValidatedGrammarsAreCheckedAgainAfterAChange) {
  Grammar pruned = parse_gbnf("root ::= \"a\" | loop\nloop ::= \"b\" loop\n");
  EXPECT_TRUE(pruned.validated);
  pruned.validated = false;
  prune_unproductive(pruned);
  EXPECT_TRUE(pruned.validated);
  EXPECT_TRUE(matches(GrammarAutomaton::compile(Grammar(pruned)), "a"));

  // A new rule referring to a rule that does not exist: compile names it.
  Grammar changed = pruned;
  Expr bad = Expr::rule_ref(77);
  changed.add_rule("extra", Expr::sequence({Expr::literal("x"), bad}));
  EXPECT_FALSE(changed.validated);
  changed.rules[changed.root].body = Expr::choice({Expr::literal("a"), Expr::rule_ref(2)});
  try {
    GrammarAutomaton::compile(std::move(changed));
    ADD_FAILURE() << "compiled a reference to a missing rule";
  } catch (const GrammarError& e) {
    EXPECT_NE(std::string(e.what()).find("rule 'extra' refers to a rule that does not exist"), std::string::npos)
        << e.what();
  }
  // prune_unproductive names such a reference too (it does not prune around it).
  Grammar dangling = parse_gbnf("root ::= \"a\"\n");
  dangling.add_rule("extra", Expr::rule_ref(9));
  EXPECT_THROW(prune_unproductive(dangling), GrammarError);
}

TEST(UnproductiveRules, DiagnoseRulesListsThemWithTheirPlaces) {
  Grammar grammar = parse_gbnf("root ::= \"a\" | loop\nloop ::= \"b\" loop\nunused ::= \"c\"\ndead ::= dead\n");
  const GrammarDiagnostics d = diagnose_rules(grammar);
  ASSERT_EQ(d.unreachable.size(), 2u);
  EXPECT_EQ(d.unreachable[0].name, "unused");
  EXPECT_EQ(d.unreachable[0].where.line, 3u);
  EXPECT_EQ(d.unreachable[1].name, "dead");
  ASSERT_EQ(d.unproductive.size(), 2u);
  EXPECT_EQ(d.unproductive[0].name, "loop");
  EXPECT_EQ(d.unproductive[0].where.line, 2u);
  EXPECT_EQ(d.unproductive[1].name, "dead");
  EXPECT_EQ(d.unproductive[1].where.line, 4u);
  // Unreachable rules are not warned about at compile time.
  ASSERT_EQ(grammar.warnings.size(), 1u);
  EXPECT_EQ(grammar.warnings[0].rule, "loop");
}

// A reference to a rule that does not exist (a grammar built in code) is an error naming the
// rule that holds it and the reference's place, also in an alternative the rule does without.
TEST(UnproductiveRules, AReferenceOutOfRangeIsAnError) {
  for (const bool in_needed_part : {false, true}) {
    Grammar g;
    g.add_rule("root", Expr::choice({Expr::literal("a"), Expr::rule_ref(1)}));
    Expr bad = Expr::rule_ref(7);
    bad.where = SourceLocation{3, 9};
    g.add_rule("other", in_needed_part ? Expr::sequence({Expr::literal("b"), bad})
                                       : Expr::choice({Expr::literal("b"), bad}));
    try {
      GrammarAutomaton::compile(std::move(g));
      ADD_FAILURE() << "compiled";
    } catch (const GrammarError& e) {
      EXPECT_NE(std::string(e.what()).find("rule 'other' refers to a rule that does not exist"), std::string::npos)
          << e.what();
      EXPECT_EQ(e.where().line, 3u);
      EXPECT_EQ(e.where().column, 9u);
    }
  }
}

TEST(UnproductiveRules, ARootThatCannotFinishIsStillAnError) {
  EXPECT_THROW(parse_gbnf("root ::= a\na ::= \"x\" a"), GrammarError);
  EXPECT_THROW(parse_gbnf("root ::= \"a\" root"), GrammarError);
}

// productive_rules() against the definition, iterated to its fixed point (a rule is
// productive when its body can derive a finite string, given the rules known productive so
// far), on random grammars built in code: sequences, choices, repeats with and without a
// minimum, empty classes and automata, machine walks, references in and out of range,
// cycles. Also the
// flags: an empty leaf or a reference out of range anywhere but under a repeat without a
// minimum (whose body is not looked at).
TEST(UnproductiveRules, ProductiveRulesEqualTheNaiveFixedPoint) {
  std::mt19937 rng(31);
  const auto any_dfa = std::make_shared<const CharDfa>(CharDfa::literal("z"));
  const auto no_dfa = std::make_shared<const CharDfa>(CharDfa::none());
  for (int round = 0; round < 300; ++round) {
    const uint32_t n = 1 + rng() % 12;
    bool empty_leaf = false, bad_ref = false;  // expected
    std::function<Expr(int, bool)> make = [&](int depth, bool looked_at) -> Expr {
      const unsigned k = depth >= 4 ? rng() % 5 : rng() % 10;
      switch (k) {
        case 9: {  // a machine walk: 1 to 4 states, up to 6 moves, a separator and 1 to 3 elements
          auto m = std::make_shared<ElementMachine>();
          const uint32_t states = 1 + rng() % 4, elements = 1 + rng() % 3;
          m->accepting.clear();
          m->move_begin.assign(1, 0);
          for (uint32_t st = 0; st < states; ++st) {
            m->accepting.push_back(rng() % 3 == 0);
            for (unsigned i = rng() % 3; i > 0; --i) m->moves.push_back({static_cast<uint32_t>(rng() % elements), static_cast<uint32_t>(rng() % states)});
            m->move_begin.push_back(static_cast<uint32_t>(m->moves.size()));
          }
          Expr sep = make(depth + 1, looked_at);
          std::vector<Expr> els;
          for (uint32_t i = 0; i < elements; ++i) els.push_back(make(depth + 1, looked_at));
          return Expr::machine_walk(std::move(m), std::move(sep), std::move(els));
        }
        case 0: return Expr::literal("x");
        case 1: return Expr::empty();
        case 2: {
          const bool empty = rng() % 4 == 0;
          empty_leaf = empty_leaf || (empty && looked_at);
          Expr e = Expr::char_class({{'a', 'b'}});
          if (empty) e.ranges.clear();
          return e;
        }
        case 3: {
          const bool empty = rng() % 3 == 0;
          empty_leaf = empty_leaf || (empty && looked_at);
          Expr e;
          e.kind = Expr::Kind::kAutomaton;
          e.automaton = empty ? no_dfa : any_dfa;
          return e;
        }
        case 4: {
          const uint32_t r = rng() % (n + 1);  // n: out of range
          bad_ref = bad_ref || (r >= n && looked_at);
          return Expr::rule_ref(r);
        }
        case 5:
        case 6: {
          std::vector<Expr> kids;
          const unsigned m = rng() % 4;
          for (unsigned i = 0; i < m; ++i) kids.push_back(make(depth + 1, looked_at));
          Expr e;  // as built, even with 0 or 1 child
          e.kind = k == 5 ? Expr::Kind::kSequence : Expr::Kind::kChoice;
          e.children = std::move(kids);
          return e;
        }
        default: {
          const uint32_t min = rng() % 2;
          Expr e;
          e.kind = Expr::Kind::kRepeat;
          e.min = min;
          e.max = 3;
          e.children.push_back(make(depth + 1, looked_at && min > 0));
          return e;
        }
      }
    };
    Grammar g;
    for (uint32_t r = 0; r < n; ++r) {
      Rule rule;
      rule.name = "r" + std::to_string(r);
      rule.body = make(0, true);
      g.rules.push_back(std::move(rule));
    }
    std::vector<char> expected(n, 0);
    std::function<bool(const Expr&)> derives = [&](const Expr& e) -> bool {
      switch (e.kind) {
        case Expr::Kind::kEmpty:
        case Expr::Kind::kLiteral: return true;
        case Expr::Kind::kCharClass: return !e.ranges.empty();
        case Expr::Kind::kAutomaton: return e.automaton && !e.automaton->empty();
        case Expr::Kind::kRuleRef: return e.rule < n && expected[e.rule];
        case Expr::Kind::kSequence:
          return std::all_of(e.children.begin(), e.children.end(), [&](const Expr& c) { return derives(c); });
        case Expr::Kind::kChoice:
          return std::any_of(e.children.begin(), e.children.end(), [&](const Expr& c) { return derives(c); });
        case Expr::Kind::kRepeat: return e.min == 0 || derives(e.children[0]);
        case Expr::Kind::kMachine: {
          // The states some walk of one element or more reaches, by relaxing every move
          // until nothing changes.
          const ElementMachine& m = *e.machine;
          std::vector<char> reached(m.num_states(), 0);
          for (bool grew = true; grew;) {
            grew = false;
            for (uint32_t st = 0; st < m.num_states(); ++st) {
              const bool from_here = st == 0 || (reached[st] && derives(e.children[0]));
              for (uint32_t i = m.move_begin[st]; from_here && i < m.move_begin[st + 1]; ++i) {
                const auto& mv = m.moves[i];
                if (!reached[mv.target] && derives(e.children[1 + mv.element])) reached[mv.target] = 1, grew = true;
              }
            }
          }
          for (uint32_t st = 0; st < m.num_states(); ++st) {
            if (reached[st] && m.accepting[st]) return true;
          }
          return false;
        }
      }
      return false;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t r = 0; r < n; ++r) {
        if (!expected[r] && derives(g.rules[r].body)) expected[r] = 1, changed = true;
      }
    }
    bool got_empty_leaf = false, got_bad_ref = false;
    EXPECT_EQ(productive_rules(g, &got_empty_leaf, &got_bad_ref), expected) << "round " << round;
    EXPECT_EQ(got_empty_leaf, empty_leaf) << "round " << round;
    EXPECT_EQ(got_bad_ref, bad_ref) << "round " << round;
  }
}

}  // namespace
}  // namespace lockstep
