// automata/utf8_ranges.cpp — see utf8_ranges.h.
#include "automata/utf8_ranges.h"

#include "grammar/utf8.h"

namespace lockstep {
namespace {

void split(uint32_t lo, uint32_t hi, std::vector<std::vector<ByteRange>>& out) {
  if (lo > hi) return;
  // Ranges that straddle an encoding-length boundary are split there first.
  static constexpr uint32_t kLengthEnds[] = {0x7F, 0x7FF, 0xFFFF};
  for (uint32_t end : kLengthEnds) {
    if (lo <= end && hi > end) {
      split(lo, end, out);
      split(end + 1, hi, out);
      return;
    }
  }
  if (hi < 0x80) {
    out.push_back({{static_cast<uint8_t>(lo), static_cast<uint8_t>(hi)}});
    return;
  }
  // Same encoded length: split until every continuation byte varies over a full block,
  // so the sequence is the cross product of independent byte ranges.
  for (int i = 1; i < 4; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        split(lo, lo | m, out);
        split((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        split(lo, (hi & ~m) - 1, out);
        split(hi & ~m, hi, out);
        return;
      }
    }
  }
  const std::string a = utf8::encode(lo);
  const std::string b = utf8::encode(hi);
  std::vector<ByteRange> seq;
  for (size_t i = 0; i < a.size(); ++i) {
    seq.push_back({static_cast<uint8_t>(a[i]), static_cast<uint8_t>(b[i])});
  }
  out.push_back(std::move(seq));
}

}  // namespace

std::vector<std::vector<ByteRange>> utf8_sequences(const std::vector<CodepointRange>& ranges) {
  std::vector<std::vector<ByteRange>> out;
  for (const auto& r : ranges) split(r.lo, r.hi, out);
  return out;
}

}  // namespace lockstep
