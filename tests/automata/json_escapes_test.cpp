// The escape rules of JSON strings (automata/json_escapes.h): escape_tail(C) reads "u" and
// exactly the \uXXXX spellings of the code points in C (surrogate pairs for those above
// U+FFFF), in either case, checked against every 4-digit value and a grid of pairs; and
// the automaton is minimal.
#include <random>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "automata/json_escapes.h"

namespace lockstep {
namespace {

bool accepts(const CharDfa& d, const std::string& s) {
  uint32_t q = d.start();
  for (const unsigned char c : s) {
    const auto& edges = d.states()[q].edges;
    const auto it = std::find_if(edges.begin(), edges.end(), [&](const CharDfa::Edge& e) { return e.lo <= c && c <= e.hi; });
    if (it == edges.end()) return false;
    q = it->target;
  }
  return d.states()[q].final;
}

bool in(const std::vector<CodepointRange>& c, uint32_t cp) {
  return std::any_of(c.begin(), c.end(), [&](const CodepointRange& r) { return r.lo <= cp && cp <= r.hi; });
}

// Hex digits in upper or lower case, at random per digit.
std::string hex4(uint32_t v, std::mt19937& rng) {
  std::string s = fmt::format("{:04x}", v);
  for (char& ch : s) {
    if (rng() & 1) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  return s;
}

TEST(JsonEscapes, EscapeTailReadsExactlyTheSpellingsOfItsCodePoints) {
  const std::vector<std::vector<CodepointRange>> sets = {
      {{'a', 'a'}},
      {{0, ',' - 1}, {'.', '`'}, {'c', 0xD7FF}, {0xE000, kMaxCodepoint}},  // all but '-', 'a', 'b'
      {{0, 0xD7FF}, {0xE000, kMaxCodepoint}},
      {{0x1F600, 0x1F64F}},
      {{0x20, 0x7E}, {0xE9, 0xE9}},
      {{0x10000, 0x103FF}, {0x1F601, kMaxCodepoint}},
      {{0xD7FF, 0xD7FF}, {0xE000, 0xE000}, {0xFFFF, 0x10000}, {0x10FFFF, 0x10FFFF}},
  };
  std::mt19937 rng(7);
  for (const auto& c : sets) {
    const auto d = escape_tail(c);
    SCOPED_TRACE(fmt::format("{} ranges, from U+{:04X}", c.size(), c.front().lo));
    EXPECT_EQ(d->minimized().size(), d->size()) << "not minimal";
    size_t mismatches = 0;
    for (uint32_t v = 0; v <= 0xFFFF; ++v) {
      const bool surrogate = v >= 0xD800 && v <= 0xDFFF;
      mismatches += accepts(*d, "u" + hex4(v, rng)) != (!surrogate && in(c, v));
    }
    EXPECT_EQ(mismatches, 0u) << "4-digit escapes";
    for (uint32_t h = 0xD800; h <= 0xDBFF; ++h) {
      for (const uint32_t l : {0xDC00u, 0xDC01u, 0xDD37u, 0xDE00u, 0xDE4Fu, 0xDFFEu, 0xDFFFu}) {
        const uint32_t cp = 0x10000 + ((h - 0xD800) << 10) + (l - 0xDC00);
        mismatches += accepts(*d, "u" + hex4(h, rng) + "\\u" + hex4(l, rng)) != in(c, cp);
      }
    }
    EXPECT_EQ(mismatches, 0u) << "surrogate pairs";
    // Not a pair: a high surrogate alone, followed by a non-surrogate, or reversed.
    EXPECT_FALSE(accepts(*d, "ud83d"));
    EXPECT_FALSE(accepts(*d, "ud83d\\u0041"));
    EXPECT_FALSE(accepts(*d, "ude00\\ud83d"));
    EXPECT_FALSE(accepts(*d, "u"));
  }
  // From after "\uD": the rest of the pairs of code points above U+FFFF.
  for (const auto& c : std::vector<std::vector<CodepointRange>>{{{0x10000, kMaxCodepoint}}, {{0x1F600, 0x1F64F}},
                                                               {{0x10000, 0x103FF}, {0x1F601, 0x1F601}}}) {
    const auto all = escape_tail(c), tail = escape_tail(c, true);
    EXPECT_EQ(tail->minimized().size(), tail->size()) << "not minimal";
    size_t mismatches = 0;
    for (uint32_t h = 0xD800; h <= 0xDBFF; ++h) {
      for (const uint32_t l : {0xDC00u, 0xDE00u, 0xDE4Fu, 0xDFFFu}) {
        const std::string spelled = hex4(h, rng) + "\\u" + hex4(l, rng);
        mismatches += accepts(*tail, spelled.substr(1)) != accepts(*all, "u" + spelled);
        mismatches += !accepts(*all, "u" + spelled) && c.size() == 1 && c[0].hi == kMaxCodepoint;
      }
    }
    EXPECT_EQ(mismatches, 0u);
  }
}

}  // namespace
}  // namespace lockstep
