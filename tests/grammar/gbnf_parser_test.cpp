// Tests of the GBNF front end: structure of the IR, error locations, and the real grammars.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "grammar/grammar.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

TEST(GbnfParser, ParsesSequencesChoicesAndRepeats) {
  Grammar g = parse_gbnf("root ::= \"a\" b* | [x-z]{2,3}\nb ::= \"b\"\n");
  ASSERT_EQ(g.rules.size(), 2u);
  EXPECT_EQ(g.rules[g.root].name, "root");
  const Expr& body = g.rules[g.root].body;
  ASSERT_EQ(body.kind, Expr::Kind::kChoice);
  ASSERT_EQ(body.children.size(), 2u);
  EXPECT_EQ(body.children[0].kind, Expr::Kind::kSequence);
  EXPECT_EQ(body.children[0].children[0].bytes, "a");
  EXPECT_EQ(body.children[0].children[1].kind, Expr::Kind::kRepeat);
  EXPECT_EQ(body.children[0].children[1].max, kUnbounded);
  const Expr& rep = body.children[1];
  ASSERT_EQ(rep.kind, Expr::Kind::kRepeat);
  EXPECT_EQ(rep.min, 2u);
  EXPECT_EQ(rep.max, 3u);
  EXPECT_EQ(rep.children[0].ranges, (std::vector<CodepointRange>{{'x', 'z'}}));
}

TEST(GbnfParser, EscapesAndUnicode) {
  Grammar g = parse_gbnf(R"(root ::= "\x41\u00e9\U0001F600\n\t\\\"" [^\x00-\x1F"ぁ-ゟ])");
  const Expr& body = g.rules[0].body;
  ASSERT_EQ(body.kind, Expr::Kind::kSequence);
  EXPECT_EQ(body.children[0].bytes, "A\xC3\xA9\xF0\x9F\x98\x80\n\t\\\"");
  // Negated class: everything but controls, '"' and hiragana, minus surrogates.
  const auto& r = body.children[1].ranges;
  EXPECT_EQ(r.front(), (CodepointRange{0x20, 0x21}));
  EXPECT_EQ(r[1], (CodepointRange{0x23, 0x3040}));
  EXPECT_EQ(r[2], (CodepointRange{0x30A0, 0xD7FF}));
  EXPECT_EQ(r.back(), (CodepointRange{0xE000, kMaxCodepoint}));
}

TEST(GbnfParser, NewlinesFollowLlamaCppLayout) {
  // A newline after '|' and inside parentheses continues the rule.
  EXPECT_NO_THROW(parse_gbnf("root ::= \"a\" |\n  \"b\"\nx ::= (\n \"c\"\n | \"d\" ) # c\n"));
  // Empty alternatives are allowed.
  EXPECT_NO_THROW(parse_gbnf("root ::= | \" \" | \"\\n\""));
}

struct ErrorCase {
  const char* text;
  uint32_t line, column;
  const char* fragment;
};

TEST(GbnfParser, ErrorsNameLineColumnAndWhatWasExpected) {
  const ErrorCase cases[] = {
      {"root ::= \"abc", 1, 14, "unterminated string"},
      {"root ::= [a-z", 1, 14, "expected ']'"},
      {"root ::= (\"a\" ", 1, 15, "expected ')'"},
      {"root ::= \"a\"\nfoo \"b\"", 2, 5, "expected '::='"},
      {"root ::= \"\\q\"", 1, 12, "unknown escape"},
      {"root ::= [z-a]", 1, 11, "out of order"},
      {"root ::= \"a\"{5,2}", 1, 13, "maximum below its minimum"},
      {"root ::= \"a\"{x}", 1, 14, "expected a number"},
      {"root ::= foo", 1, 10, "undefined rule 'foo'"},
      {"root ::= \"a\"\nroot ::= \"b\"", 2, 1, "defined twice"},
      {"root ::= \"a\" ) \"b\"", 1, 14, "end of the line"},
      {"root ::= <think>", 1, 10, "token references"},
      {"root ::= \"a\"{1000001}", 1, 14, "bound 1000001 exceeds the limit repetition_bound = 100000"},
      {"root ::= \"\\uD800\"", 1, 12, "not a Unicode scalar"},
      {"root ::= a\na ::= \"x\" a", 2, 1, "can never match"},
      {"root ::= [^\\x00-\\U0010FFFF]", 1, 1, "can never match"},
  };
  for (const auto& c : cases) {
    try {
      parse_gbnf(c.text);
      ADD_FAILURE() << "no error for: " << c.text;
    } catch (const Error& e) {  // GrammarError, or LimitError for a bound past EngineLimits
      ASSERT_TRUE(e.location().source) << e.what();
      EXPECT_EQ(e.location().source->line, c.line) << c.text << " → " << e.what();
      EXPECT_EQ(e.location().source->column, c.column) << c.text << " → " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.fragment), std::string::npos)
          << c.text << " → " << e.what();
    }
  }
}

TEST(GbnfParser, WholeGrammarErrors) {
  EXPECT_THROW(parse_gbnf(""), GrammarError);
  EXPECT_THROW(parse_gbnf("# only a comment\n"), GrammarError);
  EXPECT_THROW(parse_gbnf("start ::= \"a\""), GrammarError);  // no root
  EXPECT_NO_THROW(parse_gbnf("start ::= \"a\"", "start"));
  try {
    parse_gbnf(std::string("root ::= \"\xff\""));
    ADD_FAILURE();
  } catch (const GrammarError& e) {
    EXPECT_EQ(e.where().offset, 10u);
    EXPECT_NE(std::string(e.what()).find("invalid UTF-8"), std::string::npos);
  }
}

TEST(GbnfParser, LeftRecursionIsAccepted) {
  // The Earley matcher handles left recursion; the front end must not reject it.
  Grammar g = parse_gbnf("root ::= root \"a\" | \"b\"");
  EXPECT_EQ(g.rules.size(), 1u);
}

TEST(GbnfParser, PrintedGrammarParsesBackToTheSameText) {
  for (const auto& path : test_data::llama_cpp_grammar_files()) {
    SCOPED_TRACE(path);
    Grammar g = parse_gbnf(test_data::read_file(path));
    const std::string printed = g.to_gbnf();
    Grammar again = parse_gbnf(printed);
    EXPECT_EQ(again.to_gbnf(), printed);
    EXPECT_EQ(again.rules.size(), g.rules.size());
  }
}

}  // namespace
}  // namespace lockstep
