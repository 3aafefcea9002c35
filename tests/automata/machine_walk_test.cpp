// Machine walks (Expr::Kind::kMachine): a machine whose moves read elements, with a separator
// between two of them. The compiled language must be the one the same machine written as
// rules gives, the process-wide cache of rule automata must tell two machines apart, and the
// inlining plan must count an element once per move that reads it.
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

// A machine from per-state (element, target) moves and accepting flags.
std::shared_ptr<ElementMachine> machine(const std::vector<std::vector<std::pair<uint32_t, uint32_t>>>& moves,
                                        const std::vector<uint8_t>& accepting) {
  auto m = std::make_shared<ElementMachine>();
  m->accepting = accepting;
  for (const auto& state : moves) {
    for (const auto& [element, target] : state) m->moves.push_back({element, target});
    m->move_begin.push_back(static_cast<uint32_t>(m->moves.size()));
  }
  return m;
}

// Names a, b in any order, each once, then optionally c (state 3 accepting and moving on), a
// loop of x at every state after the first element, a value rule `v` as an element (1 or 22),
// and a separator that is a rule of its own (comma, optional semicolon).
//   states: 0 start, 1 {a}, 2 {b}, 3 {a, b}, 4 {a, b, c}
//   elements: 0 "a", 1 "b", 2 "c" v, 3 "x"
constexpr const char* kRules = R"gbnf(
root ::= "{" first "}"
first ::= "a" s1 | "b" s2
s1 ::= sep "b" s3 | sep "x" s1
s2 ::= sep "a" s3 | sep "x" s2
s3 ::= "" | sep "c" v s4 | sep "x" s3
s4 ::= "" | sep "x" s4
sep ::= "," ";"?
v ::= "1" | "22"
)gbnf";

Grammar walk_grammar(const std::shared_ptr<ElementMachine>& m) {
  Grammar g = parse_gbnf("root ::= \"{\" first \"}\"\nfirst ::= \"\"\nsep ::= \",\" \";\"?\nv ::= \"1\" | \"22\"");
  const auto sep = static_cast<uint32_t>(g.find_rule("sep"));
  const auto v = static_cast<uint32_t>(g.find_rule("v"));
  std::vector<Expr> elements{Expr::literal("a"), Expr::literal("b"),
                             Expr::sequence({Expr::literal("c"), Expr::rule_ref(v)}), Expr::literal("x")};
  Rule& first = g.rules[static_cast<size_t>(g.find_rule("first"))];
  first.body = Expr::machine_walk(m, Expr::rule_ref(sep), std::move(elements));
  first.no_inline = true;  // as the JSON Schema front end keeps it
  g.validated = false;
  return g;
}

std::shared_ptr<ElementMachine> the_machine() {
  return machine({{{0, 1}, {1, 2}}, {{1, 3}, {3, 1}}, {{0, 3}, {3, 2}}, {{2, 4}, {3, 3}}, {{3, 4}}}, {0, 0, 0, 1, 1});
}

TEST(MachineWalk, SameLanguageAsTheMachineWrittenAsRules) {
  const auto walk = GrammarAutomaton::compile(walk_grammar(the_machine()));
  const auto rules = GrammarAutomaton::compile(parse_gbnf(kRules));
  std::vector<std::string> texts;
  for (const auto& w : all_strings("abcx,;12", 6)) texts.push_back("{" + w + "}");
  size_t accepted = 0;
  for (const auto& s : texts) {
    const bool expected = accepts(*rules, s);
    ASSERT_EQ(accepts(*walk, s), expected) << '"' << s << '"';
    accepted += expected;
  }
  EXPECT_GT(accepted, 10u);  // not a vacuous comparison
  for (const char* s : {"{a,b}", "{b,;a}", "{a,x,b,c22,x}", "{b,a,c1}", "{a,x,x,b}"}) EXPECT_TRUE(accepts(*walk, s)) << s;
  for (const char* s : {"{}", "{a}", "{a,a,b}", "{a,b,c1,c1}", "{x,a,b}", "{a,b,c}", "{ab}"}) {
    EXPECT_FALSE(accepts(*walk, s)) << s;
  }
  // The walk is one rule's automaton: the separator and value rules are substituted into it.
  const Grammar& g = walk->grammar();
  const auto first = static_cast<uint32_t>(g.find_rule("first"));
  for (uint32_t q = 0; q < walk->num_states(); ++q) {
    for (const auto& e : walk->rule_edges(q)) EXPECT_NE(e.rule, static_cast<uint32_t>(g.find_rule("sep"))) << q;
  }
  EXPECT_GT(walk->rule_end(first) - walk->rule_start(first), 5u);
  // Printed as a named node with its separator and elements (its walks spelled out could be
  // endless).
  const std::string text = walk_grammar(the_machine()).to_gbnf();
  EXPECT_NE(text.find("first ::= [machine-5-states-9-moves sep : \"a\" | \"b\" | (\"c\" v) | \"x\"]"), std::string::npos)
      << text;
}

// Two walks of the same elements and separator whose machines differ (a before b, b before
// a): the cached automaton of one must not serve the other.
TEST(MachineWalk, CachedAutomataTellMachinesApart) {
  const auto ab = GrammarAutomaton::compile(walk_grammar(machine({{{0, 1}}, {{1, 2}}, {}}, {0, 0, 1})));
  const auto ba = GrammarAutomaton::compile(walk_grammar(machine({{{1, 1}}, {{0, 2}}, {}}, {0, 0, 1})));
  EXPECT_TRUE(accepts(*ab, "{a,b}"));
  EXPECT_FALSE(accepts(*ab, "{b,a}"));
  EXPECT_TRUE(accepts(*ba, "{b,a}"));
  EXPECT_FALSE(accepts(*ba, "{a,b}"));
}

// An element is built once per move that reads it: a rule it names, used nowhere else, is no
// single-use rule when two moves read it, and stays a call past the size of rules inlined
// everywhere; read by one move, it is inlined.
TEST(MachineWalk, InliningCountsAnElementOncePerMove) {
  const std::string big = "big ::= [a-z] [a-z] [a-z] [a-z] [a-z] [a-z] [a-z] [a-z] [a-z] [a-z]\n";
  for (const bool twice : {true, false}) {
    Grammar g = parse_gbnf("root ::= \"{\" first \"}\"\nfirst ::= \"\"\n" + big);
    const auto r = static_cast<uint32_t>(g.find_rule("big"));
    const auto m = twice ? machine({{{0, 1}, {1, 2}, {0, 3}}, {}, {}, {}}, {0, 1, 1, 1})
                         : machine({{{0, 1}, {1, 2}}, {}, {}}, {0, 1, 1});
    g.rules[static_cast<size_t>(g.find_rule("first"))].body =
        Expr::machine_walk(m, Expr::literal(","), {Expr::rule_ref(r), Expr::literal("y")});
    g.validated = false;
    validate(g);
    InlineLimits limits;
    limits.max_rule_size = 8;  // `big` is about 40 states: inlined only as a single use
    const InlinePlan plan = plan_inlining(g, limits);
    const Expr& walk = g.rules[static_cast<size_t>(g.find_rule("first"))].body;
    EXPECT_EQ(plan.substitutes(walk.children[1]), !twice) << (twice ? "two moves" : "one move");
  }
}

// A machine that names a state or an element it does not have, or whose offsets do not frame
// its moves, is refused when the node is made (its readers index it unchecked).
TEST(MachineWalk, MalformedMachinesAreRefused) {
  const auto make = [](std::shared_ptr<ElementMachine> m) {
    return Expr::machine_walk(std::move(m), Expr::literal(","), {Expr::literal("a"), Expr::literal("b")});
  };
  EXPECT_NO_THROW(make(machine({{{0, 1}, {1, 1}}, {}}, {0, 1})));
  EXPECT_THROW(make(machine({{{0, 2}}, {}}, {0, 1})), std::invalid_argument);  // state 2 of 2
  EXPECT_THROW(make(machine({{{2, 1}}, {}}, {0, 1})), std::invalid_argument);  // element 2 of 2
  EXPECT_THROW(make(machine({}, {})), std::invalid_argument);                  // no state
  auto short_offsets = machine({{{0, 1}}, {}}, {0, 1});
  short_offsets->move_begin.pop_back();
  EXPECT_THROW(make(short_offsets), std::invalid_argument);
}

}  // namespace
}  // namespace lockstep
