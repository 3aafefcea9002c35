// The regex front end: features, search vs full match, ECMA-262 vs RE2 meanings, and
// errors that name the position.
#include <gtest/gtest.h>

#include "automata/earley.h"
#include "grammar/grammar.h"

namespace lockstep {
namespace {

bool full_match(const std::string& pattern, const std::string& text, RegexOptions opt = {}) {
  auto g = GrammarAutomaton::compile(parse_regex(pattern, opt));
  EarleyParser p(*g);
  return p.advance(text) && p.accepting();
}

TEST(Regex, LiteralsClassesAndQuantifiers) {
  EXPECT_TRUE(full_match("[0-9]{3}-[0-9]{4}", "555-1234"));
  EXPECT_FALSE(full_match("[0-9]{3}-[0-9]{4}", "555-123"));
  EXPECT_TRUE(full_match(R"(\d{4}-\d{2}-\d{2})", "2026-11-22"));
  EXPECT_TRUE(full_match(R"(a+?b*?c??d{2,}?)", "aaabdd"));
  EXPECT_TRUE(full_match(R"([^\d\s]+)", "abc"));
  EXPECT_FALSE(full_match(R"([^\d\s]+)", "a c"));
  EXPECT_TRUE(full_match(R"(\x41\u00e9\u{1F600}\x{263A}\t)", "A\xC3\xA9\xF0\x9F\x98\x80\xE2\x98\xBA\t"));
  EXPECT_TRUE(full_match(R"(\.\*\+\?\(\)\[\]\{\}\|\\\/\^\$)", R"(.*+?()[]{}|\/^$)"));
  EXPECT_TRUE(full_match("(?:ab|cd)(?<name>e)(?P<other>f)(g)", "cdefg"));
  EXPECT_TRUE(full_match("x{,3}", "x{,3}"));  // not a repetition: literal braces
  EXPECT_TRUE(full_match("[[:alpha:]][[:^digit:]]", "a!"));
  EXPECT_TRUE(full_match("a|", ""));
  EXPECT_TRUE(full_match("()", ""));
}

TEST(Regex, UnicodePropertiesAndCaseFolding) {
  EXPECT_TRUE(full_match(R"(\p{Lu}\p{Ll}+\pN)", "\xC3\x89t\xC3\xa9" "3"));  // Été3
  EXPECT_FALSE(full_match(R"(\p{Lu})", "a"));
  EXPECT_TRUE(full_match(R"(\P{L}+)", "123 !"));
  EXPECT_TRUE(full_match("(?i)hello", "HeLLo"));
  EXPECT_TRUE(full_match("(?i)k", "\xE2\x84\xAA"));  // KELVIN SIGN folds with k
  EXPECT_TRUE(full_match("(?i)[a-c]x", "Bx"));
  EXPECT_TRUE(full_match("a(?i:b)c", "aBc"));
  EXPECT_FALSE(full_match("a(?i:b)c", "aBC"));
  EXPECT_TRUE(full_match("(?i)[^a]", "b"));
  EXPECT_FALSE(full_match("(?i)[^a]", "A"));
}

TEST(Regex, DotAndWhitespaceFollowTheDialect) {
  EXPECT_FALSE(full_match(".", "\n"));
  EXPECT_TRUE(full_match(".", "\r"));
  EXPECT_TRUE(full_match("(?s).", "\n"));
  RegexOptions ecma;
  ecma.ecma = true;
  EXPECT_FALSE(full_match(".", "\r", ecma));
  EXPECT_FALSE(full_match(".", "\xE2\x80\xA8", ecma));  // U+2028
  EXPECT_TRUE(full_match(R"(\s)", "\xC2\xA0", ecma));   // NBSP is whitespace in ECMA-262
  EXPECT_FALSE(full_match(R"(\s)", "\xC2\xA0"));        // but not in RE2
  EXPECT_FALSE(full_match(R"(\s)", "\v"));
  EXPECT_TRUE(full_match(R"(\s)", "\v", ecma));
}

TEST(Regex, SearchSemanticsForJsonSchemaPatterns) {
  RegexOptions search;
  search.search = true;
  EXPECT_TRUE(full_match("ab", "xxabyy", search));
  EXPECT_TRUE(full_match("^ab", "abyy", search));
  EXPECT_FALSE(full_match("^ab", "xab", search));
  EXPECT_TRUE(full_match("ab$", "xxab", search));
  EXPECT_FALSE(full_match("ab$", "abx", search));
  EXPECT_TRUE(full_match("^ab$", "ab", search));
  EXPECT_TRUE(full_match("^a|b$", "axx", search));
  EXPECT_TRUE(full_match("^a|b$", "xxb", search));
  EXPECT_FALSE(full_match("^a|b$", "xax", search));
  EXPECT_TRUE(full_match("a", "line\nwith a\nnewline", search));  // the rest may hold newlines
  EXPECT_TRUE(full_match("^ab$", "ab"));  // in full-match mode the anchors change nothing
}

// A search over many top-level alternatives: one unanchored prefix and suffix for all of
// them. As `.*a.*|.*b.*|…` the automaton told apart every subset of alternatives already
// matched and went past the state limit (a fuzzing finding: 62 one-letter alternatives).
TEST(Regex, ASearchOverManyAlternativesStaysSmall) {
  std::string pattern = "samwise|sam";
  for (char c = 'a'; c <= 'z'; ++c) pattern += std::string("|") + c;
  for (char c = 'A'; c <= 'Z'; ++c) pattern += std::string("|") + c;
  pattern += "|^9|0$|^42$";
  RegexOptions search;
  search.search = true;
  const auto g = GrammarAutomaton::compile(parse_regex(pattern, search));
  EXPECT_LT(g->num_states(), 200u);
  for (const auto& [text, match] : std::vector<std::pair<std::string, bool>>{
           {"--x--", true}, {"123", false}, {"9--", true}, {"--9", false}, {"--0", true}, {"0--", false},
           {"42", true}, {"142", false}, {"samwise", true}, {"", false}}) {
    EarleyParser p(*g);
    EXPECT_EQ(p.advance(text) && p.accepting(), match) << text;
  }
}

struct ErrorCase {
  const char* pattern;
  uint32_t column;
  const char* fragment;
};

TEST(Regex, MalformedPatternsNameThePosition) {
  const ErrorCase cases[] = {
      {"(ab", 1, "missing ')'"},
      {"ab)", 3, "unmatched ')'"},
      {"[z-a]", 2, "out of order"},
      {"[abc", 1, "missing ']'"},
      {"a{5,2}", 2, "maximum below its minimum"},
      {"\\q", 1, "unknown escape \\q"},
      {"ab\\", 3, "lone backslash"},
      {"*a", 1, "nothing to repeat"},
      {"a**", 3, "cannot be repeated directly"},
      {"a(?=b)", 2, "lookaround"},
      {"(?<!a)b", 1, "lookaround"},
      {"(a)\\1", 4, "backreferences"},
      {"\\bword", 1, "word boundaries"},
      {"a^b", 2, "only supported at the start"},
      {"a$b", 2, "only supported at the end"},
      {"\\p{Greek}", 1, "unknown Unicode property"},
      {"(?m)^a$", 3, "multi-line"},
      {"\\x{110000}", 1, "above U+10FFFF"},
      {"a{100001}", 3, "count 100001 exceeds the limit repetition_bound = 100000"},
      {"[\\d-z]", 2, "cannot start a range"},
      {"[^\\s\\S]", 1, "can never match"},  // the whole pattern's language is empty
  };
  for (const auto& c : cases) {
    try {
      parse_regex(c.pattern);
      ADD_FAILURE() << "no error for " << c.pattern;
    } catch (const Error& e) {  // GrammarError, or LimitError for a count past EngineLimits
      ASSERT_TRUE(e.location().source) << e.what();
      EXPECT_EQ(e.location().source->line, 1u) << c.pattern;
      EXPECT_EQ(e.location().source->column, c.column) << c.pattern << " → " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.fragment), std::string::npos) << c.pattern << " → " << e.what();
    }
  }
}

TEST(Regex, LargeBoundedRepetitionsCompileInBoundedTime) {
  auto digits = GrammarAutomaton::compile(parse_regex(R"(\d{1,1000})"));
  EarleyParser p(*digits);
  EXPECT_TRUE(p.advance(std::string(1000, '7')) && p.accepting());
  EXPECT_FALSE(p.advance('7'));
  auto any = GrammarAutomaton::compile(parse_regex(".{0,5000}"));
  EXPECT_LT(any->num_states(), 20u * 5001);  // one position = a state plus its UTF-8 continuations
  EarleyParser q(*any);
  std::string text;
  for (int i = 0; i < 1250; ++i) text += "ab\xC3\xA9\xF0\x9F\x98\x80";  // 5000 code points
  EXPECT_TRUE(q.advance(text) && q.accepting());
  EXPECT_FALSE(q.advance('x'));
}

}  // namespace
}  // namespace lockstep
