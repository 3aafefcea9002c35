// The mask walk's parse of token bytes (mask::StateWalker): several stacks where a byte has
// several ways to go, the Earley parser past kMaxStacks of them, and masks of grammars that
// need them against brute force.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "automata/mask/state_walker.h"
#include "grammar/grammar.h"
#include "tests/automata/brute_force_walks.h"

namespace lockstep {
namespace {

using mask::StateWalker;
using test_walks::check_random_walk;
using test_walks::llama3_tokenizer;
using test_walks::schema_automaton;

std::shared_ptr<const GrammarAutomaton> compile_rules(const std::string& gbnf) {
  CompileLimits no_inlining;
  no_inlining.inline_rules = false;
  return GrammarAutomaton::compile(parse_gbnf(gbnf), no_inlining);
}

bool walk(StateWalker& w, const std::string& bytes) {
  for (const char c : bytes) {
    if (!w.advance(static_cast<uint8_t>(c))) return false;
  }
  return true;
}

// An object's member rules that both start with a quote (a named key, and any other key):
// the walk keeps both stacks while the bytes fit both, one when they part, and records the
// depths where the start rule can complete as in Earley mode.
TEST(StateWalker, KeepsAStackPerWayToGo) {
  const auto g = compile_rules(
      "root ::= named | other\n"
      "named ::= \"\\\"ab\\\":\" [0-9]\n"
      "other ::= \"\\\"\" [a-z]+ \"\\\":\" [a-z]\n");
  const uint32_t start = g->rule_start(g->root_rule());
  StateWalker w(*g, ParserLimits{}, start, 16, false);
  ASSERT_TRUE(walk(w, "\"a"));
  EXPECT_FALSE(w.in_earley_mode());
  EXPECT_EQ(w.stacks(), 2u);
  ASSERT_NE(w.next_bytes(), nullptr);
  // b (both), c (other); never ':' yet on named's side, but other reads it after a letter.
  EXPECT_TRUE(((*w.next_bytes())['b' >> 6] >> ('b' & 63)) & 1);
  EXPECT_TRUE(((*w.next_bytes())['c' >> 6] >> ('c' & 63)) & 1);
  EXPECT_TRUE(((*w.next_bytes())['"' >> 6] >> ('"' & 63)) & 1);
  ASSERT_TRUE(walk(w, "b\":"));
  EXPECT_EQ(w.stacks(), 2u);
  ASSERT_TRUE(walk(w, "7"));  // only named reads a digit
  EXPECT_EQ(w.stacks(), 1u);
  EXPECT_TRUE(w.boundary_at(6));
  EXPECT_FALSE(w.boundary_at(5));
  w.back_to(5);
  EXPECT_EQ(w.stacks(), 2u);
  ASSERT_TRUE(walk(w, "x"));  // only other reads a letter
  EXPECT_EQ(w.stacks(), 1u);
  EXPECT_TRUE(w.boundary_at(6));
  w.back_to(2);
  EXPECT_FALSE(w.advance('0'));
  EXPECT_EQ(w.depth(), 2u);
  EXPECT_EQ(w.stacks(), 2u);
}

// Where one of two stacks can complete and the other cannot, the depth is a boundary,
// whichever of the two rules comes first.
TEST(StateWalker, ABoundaryOfAnyStackIsABoundary) {
  for (const char* gbnf : {"root ::= longer | shorter\nlonger ::= \"\\\"xy\"\nshorter ::= \"\\\"x\"\n",
                           "root ::= shorter | longer\nshorter ::= \"\\\"x\"\nlonger ::= \"\\\"xy\"\n"}) {
    SCOPED_TRACE(gbnf);
    const auto g = compile_rules(gbnf);
    StateWalker w(*g, ParserLimits{}, g->rule_start(g->root_rule()), 16, false);
    ASSERT_TRUE(walk(w, "\"x"));
    EXPECT_FALSE(w.in_earley_mode());
    EXPECT_EQ(w.stacks(), 2u);
    EXPECT_TRUE(w.boundary_at(2));
    EXPECT_FALSE(w.boundary_at(1));
    ASSERT_TRUE(walk(w, "y"));
    EXPECT_EQ(w.stacks(), 1u);
    EXPECT_TRUE(w.boundary_at(3));
  }
}

// Nine rules that all read the byte after an `a`: past kMaxStacks (8) the Earley parser
// carries the path from there, with the same boundaries, and is left when the walk backs out
// above that depth.
TEST(StateWalker, TakesTheEarleyParserPastEightStacks) {
  std::string gbnf = "root ::= \"a\" (w0";
  for (int i = 1; i < 9; ++i) gbnf += " | w" + std::to_string(i);
  gbnf += ")\n";
  for (int i = 0; i < 9; ++i) gbnf += "w" + std::to_string(i) + " ::= \"x" + std::to_string(i) + "\"\n";
  const auto g = compile_rules(gbnf);
  StateWalker w(*g, ParserLimits{}, g->rule_start(g->root_rule()), 16, false);
  ASSERT_TRUE(walk(w, "a"));
  EXPECT_EQ(w.stacks(), 1u);
  ASSERT_TRUE(walk(w, "x"));
  EXPECT_TRUE(w.in_earley_mode());
  ASSERT_TRUE(walk(w, "5"));
  EXPECT_TRUE(w.boundary_at(3));
  EXPECT_FALSE(w.boundary_at(2));
  EXPECT_FALSE(w.advance('5'));
  w.back_to(2);
  EXPECT_TRUE(w.in_earley_mode());
  ASSERT_TRUE(walk(w, "8"));
  EXPECT_TRUE(w.boundary_at(3));
  w.back_to(0);
  EXPECT_FALSE(w.in_earley_mode());
  EXPECT_EQ(w.stacks(), 1u);
}

// In Earley mode next_bytes() is known, and is exactly the bytes advance() takes: probed one
// by one at each depth of a path, after backing out within the Earley depths and after a
// failed byte (the vocabulary walk skips the tokens whose byte it lacks).
TEST(StateWalker, NextBytesInEarleyModeAreTheBytesItAdvancesOn) {
  std::string gbnf = "root ::= \"a\" (w0";
  for (int i = 1; i < 9; ++i) gbnf += " | w" + std::to_string(i);
  gbnf += ")\n";
  for (int i = 0; i < 9; ++i) {  // after "x<i>": a letter up to the i-th after a, or "!"
    gbnf += "w" + std::to_string(i) + " ::= \"x" + std::to_string(i) + "\" [a-" + std::string(1, static_cast<char>('a' + i)) +
            "]? \"!\"\n";
  }
  const auto g = compile_rules(gbnf);
  StateWalker w(*g, ParserLimits{}, g->rule_start(g->root_rule()), 16, false);
  auto expect_exact = [&](const std::string& at) {
    SCOPED_TRACE(at);
    const GrammarAutomaton::ByteSet* next = w.next_bytes();
    ASSERT_NE(next, nullptr);
    const GrammarAutomaton::ByteSet shown = *next;  // the probes below overwrite deeper entries
    const size_t d = w.depth();
    size_t readable = 0;
    for (unsigned b = 0; b < 256; ++b) {
      const bool in = (shown[b >> 6] >> (b & 63)) & 1;
      const bool takes = w.advance(static_cast<uint8_t>(b));
      EXPECT_EQ(in, takes) << "byte " << b;
      readable += takes ? 1 : 0;
      w.back_to(d);
      ASSERT_EQ(w.depth(), d);
    }
    EXPECT_GT(readable, 0u);
  };
  ASSERT_TRUE(walk(w, "ax"));
  ASSERT_TRUE(w.in_earley_mode());
  expect_exact("ax");  // the nine digits
  ASSERT_TRUE(walk(w, "4"));
  expect_exact("ax4");  // a to e, or !
  EXPECT_FALSE(w.advance('z'));
  expect_exact("ax4 after z");
  ASSERT_TRUE(walk(w, "b"));
  expect_exact("ax4b");  // ! alone
  w.back_to(2);
  ASSERT_TRUE(w.in_earley_mode());
  ASSERT_TRUE(walk(w, "7!"));
  EXPECT_TRUE(w.boundary_at(4));
  w.back_to(3);
  expect_exact("ax7 again");  // a to h, or !: not the set first made at this depth
}

// dependentSchemas over properties that admit other keys: the object is a union of member
// machines whose named and other keys both start with a quote. Masks along random walks
// equal brute force on Llama 3.
TEST(StateWalker, MasksWithSeveralStacksEqualBruteForceOnLlama3) {
  const auto tok = llama3_tokenizer();
  const auto vocab = tok->shared_vocabulary();
  std::mt19937 rng(1985);
  JsonSchemaOptions o;
  o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  o.max_whitespace = 1;
  const auto g = schema_automaton(
      R"({"type":"object","properties":{"alpha":{"type":"string"},"al":{"type":"integer"},"beta":{"type":"integer"},"b":{"type":"boolean"}},)"
      R"("dependentSchemas":{"alpha":{"properties":{"beta":{"type":"integer"}},"required":["beta"]},"al":{"required":["b"]}},)"
      R"("dependentRequired":{"beta":["al"]}})",
      o);
  size_t masks = 0;
  for (int walk = 0; walk < 8; ++walk) masks += check_random_walk(g, vocab, rng, 16);
  std::printf("[ property ] several stacks on llama3: %zu masks equal to brute force\n", masks);
  EXPECT_GT(masks, 60u);
}

}  // namespace
}  // namespace lockstep
