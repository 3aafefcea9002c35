// UTF-8 range compilation, checked exhaustively against the encoder on every code point.
#include <gtest/gtest.h>

#include "automata/utf8_ranges.h"
#include "grammar/utf8.h"

namespace lockstep {
namespace {

bool matches(const std::vector<std::vector<ByteRange>>& seqs, const std::string& bytes) {
  for (const auto& seq : seqs) {
    if (seq.size() != bytes.size()) continue;
    bool ok = true;
    for (size_t i = 0; i < seq.size() && ok; ++i) {
      const auto b = static_cast<uint8_t>(bytes[i]);
      ok = seq[i].lo <= b && b <= seq[i].hi;
    }
    if (ok) return true;
  }
  return false;
}

TEST(Utf8Ranges, ExactlyTheEncodingsOfTheClass) {
  const std::vector<std::vector<CodepointRange>> classes = {
      Expr::any_codepoint().ranges,
      Expr::char_class({{'"', '"'}, {'\\', '\\'}, {0, 0x1F}, {0x7F, 0x7F}}, true).ranges,
      Expr::char_class({{0x3041, 0x309F}, {0x4E00, 0x9FFF}}).ranges,
      Expr::char_class({{0x7F, 0x800}, {0xFFFF, 0x10000}, {0x10FFFE, 0x10FFFF}}).ranges,
      Expr::char_class({{0x80, 0x80}}).ranges,
  };
  for (const auto& ranges : classes) {
    const auto seqs = utf8_sequences(ranges);
    for (uint32_t cp = 0; cp <= kMaxCodepoint; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      bool in = false;
      for (const auto& r : ranges) in = in || (r.lo <= cp && cp <= r.hi);
      ASSERT_EQ(matches(seqs, utf8::encode(cp)), in) << "U+" << std::hex << cp;
    }
  }
}

TEST(Utf8Ranges, SurrogatesAndOverlongFormsNeverMatch) {
  const auto seqs = utf8_sequences(Expr::any_codepoint().ranges);
  EXPECT_FALSE(matches(seqs, "\xED\xA0\x80"));  // U+D800 encoded naively
  EXPECT_FALSE(matches(seqs, "\xC0\xAF"));      // overlong '/'
  EXPECT_FALSE(matches(seqs, "\xE0\x80\xAF"));  // overlong '/'
  EXPECT_FALSE(matches(seqs, "\xF4\x90\x80\x80"));  // above U+10FFFF
}

}  // namespace
}  // namespace lockstep
