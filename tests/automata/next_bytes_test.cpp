// next_bytes: the byte set read from the items' edges is exactly the set of bytes the
// parser accepts (probed one by one), and byte sets read as short phrases.
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/next_bytes.h"
#include "schemas/json_schema.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

using ByteSet = GrammarAutomaton::ByteSet;

bool has(const ByteSet& s, unsigned b) { return (s[b >> 6] >> (b & 63)) & 1; }

ByteSet set_of(std::initializer_list<std::pair<unsigned, unsigned>> ranges) {
  ByteSet s{};
  for (auto [lo, hi] : ranges) {
    for (unsigned b = lo; b <= hi; ++b) s[b >> 6] |= uint64_t{1} << (b & 63);
  }
  return s;
}

// Random walks through `g`: at every step next_bytes agrees with advance() on all 256 bytes.
// Returns the number of steps checked.
size_t expect_agreement_on_walks(const GrammarAutomaton& g, const std::string& name) {
  size_t steps = 0;
  std::mt19937 rng(7);
  for (int walk = 0; walk < 4; ++walk) {
    EarleyParser p(g);
    for (int step = 0; step < 120; ++step) {
      const ByteSet next = next_bytes(p);
      std::vector<uint8_t> accepted;
      for (unsigned b = 0; b < 256; ++b) {
        const bool ok = p.advance(static_cast<uint8_t>(b));
        if (ok) {
          p.rollback(1);
          accepted.push_back(static_cast<uint8_t>(b));
        }
        EXPECT_EQ(has(next, b), ok) << name << ", walk " << walk << ", step " << step << ", byte " << b;
      }
      ++steps;
      if (accepted.empty()) break;
      EXPECT_TRUE(p.advance(accepted[rng() % accepted.size()]));
    }
  }
  return steps;
}

TEST(NextBytes, AreTheBytesTheParserAcceptsOnGbnfGrammars) {
  size_t steps = 0;
  for (const auto& path : test_data::llama_cpp_grammar_files()) {
    std::shared_ptr<const GrammarAutomaton> g;
    try {
      g = GrammarAutomaton::compile(parse_gbnf(test_data::read_file(path)));
    } catch (const GrammarError&) {
      continue;  // grammars with features lockstep rejects are tested elsewhere
    }
    steps += expect_agreement_on_walks(*g, path.filename().string());
  }
  EXPECT_GT(steps, 2000u);
}

TEST(NextBytes, AreTheBytesTheParserAcceptsOnSchemaGrammars) {
  const auto event = nlohmann::ordered_json::parse(
      test_data::read_file(std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "examples/schemas/event.json"));
  size_t steps = 0;
  for (auto order : {JsonSchemaOptions::PropertyOrder::kAny, JsonSchemaOptions::PropertyOrder::kSchema}) {
    JsonSchemaOptions o;
    o.property_order = order;
    steps += expect_agreement_on_walks(*GrammarAutomaton::compile(compile_json_schema(event, o).grammar), "event.json");
  }
  steps += expect_agreement_on_walks(*GrammarAutomaton::compile(json_value_grammar()), "any JSON value");
  EXPECT_GT(steps, 300u);
}

TEST(NextBytes, DescribeClassesThenBytesThenWhitespace) {
  using V = std::vector<std::string>;
  EXPECT_EQ(describe_bytes(set_of({{'0', '9'}, {'.', '.'}, {',', ','}, {'}', '}'}})), (V{"a digit", "','", "'.'", "'}'"}));
  EXPECT_EQ(describe_bytes(set_of({{'1', '9'}, {'-', '-'}})), (V{"a digit from 1 to 9", "'-'"}));
  EXPECT_EQ(describe_bytes(set_of({{0x20, 0x7e}, {0xc2, 0xf4}})), (V{"any character"}));
  EXPECT_EQ(describe_bytes(set_of({{0x20, 0x7e}})), (V{"any ASCII character"}));
  EXPECT_EQ(describe_bytes(set_of({{0xc2, 0xf4}, {'"', '"'}})), (V{"a non-ASCII character", "'\"'"}));
  EXPECT_EQ(describe_bytes(set_of({{'"', '"'}, {' ', ' '}, {'\t', '\n'}, {'\r', '\r'}})), (V{"'\"'", "whitespace"}));
  EXPECT_EQ(describe_bytes(set_of({{' ', ' '}, {'\n', '\n'}})), (V{"'\\n'", "' '"}));
  EXPECT_EQ(describe_bytes(set_of({{'a', 'z'}, {'A', 'Z'}, {'_', '_'}})), (V{"a letter", "'_'"}));
  EXPECT_EQ(describe_bytes(set_of({{'a', 'z'}})), (V{"a lowercase letter"}));
  EXPECT_EQ(describe_bytes(set_of({{'A', 'Z'}})), (V{"an uppercase letter"}));
  EXPECT_EQ(describe_bytes(set_of({{'a', 'f'}, {'x', 'y'}})), (V{"'a'-'f'", "'x'", "'y'"}));
  EXPECT_EQ(describe_bytes(set_of({{0x80, 0xbf}})), (V{"'\\x80'-'\\xbf'"}));
  EXPECT_EQ(describe_bytes(set_of({{0x01, 0x01}, {'\'', '\''}, {'\\', '\\'}})), (V{"'\\x01'", "'\\''", "'\\\\'"}));
  EXPECT_EQ(describe_bytes(ByteSet{}), V{});
  ByteSet sparse{};
  for (unsigned b = 0x80; b < 0x100; b += 2) sparse[b >> 6] |= uint64_t{1} << (b & 63);
  const V parts = describe_bytes(sparse);
  ASSERT_EQ(parts.size(), 9u);
  EXPECT_EQ(parts.back(), "56 other bytes or ranges");
}

TEST(NextBytes, QuotesAndJoins) {
  EXPECT_EQ(quote_bytes("a\"b'\n"), "'a\"b\\'\\n'");
  EXPECT_EQ(quote_byte(0x7f), "'\\x7f'");
  EXPECT_EQ(join_alternatives({}), "");
  EXPECT_EQ(join_alternatives({"A"}), "A");
  EXPECT_EQ(join_alternatives({"A", "B"}), "A or B");
  EXPECT_EQ(join_alternatives({"A", "B", "C"}), "A, B or C");
}

// ByteSet::next_byte (the word scans the mask walks' galloping search uses) finds the
// smallest member at or above every starting byte, as a byte-by-byte scan does.
TEST(NextBytes, NextByteIsTheSmallestMemberFromAByteOn) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    ByteSet s{};
    const unsigned members = round % 9;  // empty, and sets around the 64-bit word boundaries
    for (unsigned i = 0; i < members; ++i) {
      const unsigned b = round % 3 == 0 ? 62 + rng() % 5 : rng() % 256;
      s[b >> 6] |= uint64_t{1} << (b & 63);
    }
    if (round % 4 == 0) s[3] |= uint64_t{1} << 63;  // byte 255
    for (unsigned from = 0; from <= 256; ++from) {
      unsigned want = from;
      while (want < 256 && !has(s, want)) ++want;
      ASSERT_EQ(GrammarAutomaton::next_byte(s, from), want) << "round " << round << " from " << from;
    }
  }
  EXPECT_EQ(GrammarAutomaton::next_byte(set_of({{'a', 'a'}}), 'b'), 256u);
  EXPECT_EQ(GrammarAutomaton::next_byte(set_of({{'"', '"'}, {'v', 'v'}}), '#'), unsigned{'v'});
}

}  // namespace
}  // namespace lockstep
