// Escaped surrogate pairs in JSON strings ("\ud83d\ude00", RFC 8259 §7) are one code point
// for minLength/maxLength and pattern; lone and reversed surrogates are rejected. Checked on
// hand-picked texts and against an independent decoder (nlohmann/json) on random ones.
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grammar/utf8.h"
#include "tests/schemas/compiled_schema.h"

namespace lockstep {
namespace {

using Compiled = schema_test::CompiledSchemaGrammar;
Compiled compile(const std::string& schema) { return schema_test::compile_schema(schema, schema_test::compact_options()); }

TEST(SurrogatePairs, AnEscapedPairIsOneCodePoint) {
  const Compiled one = compile(R"({"type": "string", "maxLength": 1})");
  EXPECT_TRUE(one.accepts(R"("\ud83d\ude00")"));
  EXPECT_TRUE(one.accepts(R"("\uD83D\uDE00")"));
  EXPECT_TRUE(one.accepts(R"("\uD83d\uDe00")"));
  EXPECT_TRUE(one.accepts(R"("\ud800\udc00")"));  // U+10000
  EXPECT_TRUE(one.accepts(R"("\udbff\udfff")"));  // U+10FFFF
  EXPECT_TRUE(one.accepts("\"\xf0\x9f\x98\x80\""));
  EXPECT_FALSE(one.accepts(R"("\ud83d\ude00a")"));
  EXPECT_FALSE(one.accepts(R"("\ud83d\ude00\ud83d\ude00")"));
  const Compiled two = compile(R"({"type": "string", "minLength": 2, "maxLength": 2})");
  EXPECT_FALSE(two.accepts(R"("\ud83d\ude00")"));  // one code point, not two UTF-16 units
  EXPECT_TRUE(two.accepts(R"("\ud83d\ude00x")"));
  EXPECT_TRUE(two.accepts("\"\\ud83d\\ude00\xf0\x9f\x98\x80\""));
  const Compiled dot = compile(R"({"type": "string", "pattern": "^.$"})");
  EXPECT_TRUE(dot.accepts(R"("\ud83d\ude00")"));
  EXPECT_FALSE(dot.accepts(R"("\ud83d\ude00\ud83d\ude00")"));
}

TEST(SurrogatePairs, LoneAndReversedSurrogatesAreRejected) {
  for (const char* schema : {R"({"type": "string"})", R"({"type": "string", "maxLength": 3})",
                             R"({"type": "string", "pattern": "^.*$"})"}) {
    SCOPED_TRACE(schema);
    const Compiled c = compile(schema);
    EXPECT_TRUE(c.accepts(R"("a\ud800\udc00b")"));
    for (const char* bad : {R"("\ud83d")", R"("\ude00")", R"("\ude00\ud83d")", R"("\ud83d\ud83d")",
                            R"("\ud83da")", R"("\ud83d\u0041")", R"("\ud83d\ude0")", R"("\ud83d\\ude00")"}) {
      EXPECT_FALSE(c.accepts(bad)) << bad;
    }
  }
}

TEST(SurrogatePairs, PatternsSeeTheCodePoint) {
  // U+1F600..U+1F602 (one high surrogate), and U+1F000..U+20FFF (several).
  const Compiled few = compile("{\"type\": \"string\", \"pattern\": \"^[\xf0\x9f\x98\x80-\xf0\x9f\x98\x82]+$\"}");
  EXPECT_TRUE(few.accepts(R"("\ud83d\ude01")"));
  EXPECT_TRUE(few.accepts("\"\\ud83d\\ude00\xf0\x9f\x98\x82\\ud83d\\ude02\""));
  EXPECT_FALSE(few.accepts(R"("\ud83d\ude03")"));
  EXPECT_FALSE(few.accepts(R"("\ud83c\ude01")"));
  const Compiled wide = compile(R"({"type": "string", "pattern": "^[\\u{1F000}-\\u{20FFF}]$"})");
  EXPECT_TRUE(wide.accepts(R"("\ud83c\udc00")"));  // U+1F000
  EXPECT_TRUE(wide.accepts(R"("\ud843\udfff")"));  // U+20FFF
  EXPECT_TRUE(wide.accepts(R"("\ud840\udc00")"));  // U+20000
  EXPECT_FALSE(wide.accepts(R"("\ud83b\udfff")"));  // U+1EFFF
  EXPECT_FALSE(wide.accepts(R"("\ud844\udc00")"));  // U+21000
  // Different targets for different supplementary code points: "😀a" or "😁b".
  const Compiled split = compile(R"({"type": "string", "pattern": "^(\\u{1F600}a|\\u{1F601}b)$"})");
  EXPECT_TRUE(split.accepts(R"("\ud83d\ude00a")"));
  EXPECT_TRUE(split.accepts(R"("\ud83d\ude01b")"));
  EXPECT_FALSE(split.accepts(R"("\ud83d\ude00b")"));
  EXPECT_FALSE(split.accepts(R"("\ud83d\ude01a")"));
}

// The code points of a UTF-8 text (valid, as nlohmann/json decodes it).
std::vector<uint32_t> code_points(const std::string& utf8) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < utf8.size();) {
    const auto b = static_cast<uint8_t>(utf8[i]);
    const size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    uint32_t cp = n == 1 ? b : b & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) cp = cp << 6 | (static_cast<uint8_t>(utf8[i + k]) & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}

// Random JSON string texts: raw and escaped code points of every plane, escaped pairs in
// either case, and broken escapes (lone, reversed or doubled surrogates).
std::string random_string(std::mt19937& rng) {
  const auto hex4 = [&](uint32_t v) {
    std::string s = fmt::format("\\u{:04x}", v);
    for (size_t i = 2; i < s.size(); ++i) {
      if (rng() % 2) s[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[i])));
    }
    return s;
  };
  const auto pair = [&](uint32_t cp) {
    return hex4(0xD800 + ((cp - 0x10000) >> 10)) + hex4(0xDC00 + ((cp - 0x10000) & 0x3FF));
  };
  const uint32_t supplementary[] = {0x10000, 0x1F600, 0x1F601, 0x1F602, 0x1F64F, 0x20000, 0x10FFFF};
  std::string s = "\"";
  const int n = static_cast<int>(rng() % 5);
  for (int i = 0; i < n; ++i) {
    const uint32_t cp = supplementary[rng() % std::size(supplementary)];
    switch (rng() % 10) {
      case 0: s += static_cast<char>('a' + rng() % 3); break;
      case 1: s += rng() % 2 ? "\\n" : "\\\""; break;
      case 2: s += hex4(rng() % 2 ? 0xE9 : 0xD7FF); break;
      case 3: utf8::append(s, rng() % 2 ? 0xE9 : 0x4E2D); break;
      case 4: utf8::append(s, cp); break;
      case 5: case 6: s += pair(cp); break;
      case 7: s += hex4(0xD800 + rng() % 0x800); break;  // a lone surrogate
      case 8: s += pair(cp).substr(6) + pair(cp).substr(0, 6); break;  // reversed
      default: s += pair(cp).substr(0, 6 + rng() % 6); break;  // a pair cut short
    }
  }
  return s + "\"";
}

TEST(SurrogatePairs, LengthsAndPatternsAgreeWithAnIndependentDecoder) {
  struct Case {
    const char* schema;
    uint32_t min, max;
    bool emoji_only;  // pattern: every code point in U+1F600..U+1F64F
  };
  const Case cases[] = {
      {R"({"type": "string", "maxLength": 1})", 0, 1, false},
      {R"({"type": "string", "minLength": 2, "maxLength": 3})", 2, 3, false},
      {R"({"type": "string", "minLength": 3})", 3, UINT32_MAX, false},
      {"{\"type\": \"string\", \"pattern\": \"^[\xf0\x9f\x98\x80-\xf0\x9f\x99\x8f]{1,2}$\"}", 1, 2, true},
  };
  std::mt19937 rng(2024);
  std::vector<Compiled> compiled;
  for (const Case& c : cases) compiled.push_back(compile(c.schema));
  size_t valid_texts = 0, pairs_seen = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::string text = random_string(rng);
    std::vector<uint32_t> cps;
    bool decodes = true;
    try {
      cps = code_points(nlohmann::json::parse(text).get<std::string>());
    } catch (const nlohmann::json::exception&) {
      decodes = false;
    }
    valid_texts += decodes;
    std::string lower = text;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (const char* high : {"\\ud8", "\\ud9", "\\uda", "\\udb"}) {
      if (decodes && lower.find(high) != std::string::npos) {
        ++pairs_seen;  // a valid text with an escaped pair
        break;
      }
    }
    for (size_t k = 0; k < std::size(cases); ++k) {
      const Case& c = cases[k];
      bool expected = decodes && cps.size() >= c.min && cps.size() <= c.max;
      if (c.emoji_only) {
        for (uint32_t cp : cps) expected = expected && cp >= 0x1F600 && cp <= 0x1F64F;
      }
      EXPECT_EQ(compiled[k].accepts(text), expected) << c.schema << " on " << text;
    }
    if (testing::Test::HasFailure()) return;
  }
  EXPECT_GT(valid_texts, 500u);
  EXPECT_GT(pairs_seen, 100u);
}

}  // namespace
}  // namespace lockstep
