// automata/utf8_ranges.h — code-point ranges → sequences of byte ranges (UTF-8).
//
// A code-point class becomes a union of byte-range sequences, each of which matches
// exactly the UTF-8 encodings of one sub-range (the construction used by RE2's compiler
// and Rust's utf8-ranges: split at encoding-length and continuation-byte boundaries).
#pragma once

#include <cstdint>
#include <vector>

#include "grammar/grammar.h"

namespace lockstep {

struct ByteRange {
  uint8_t lo = 0;
  uint8_t hi = 0;
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

/// Byte-range sequences whose union matches exactly the UTF-8 encodings of the code
/// points in `ranges` (which must exclude surrogates, as Expr::char_class guarantees).
std::vector<std::vector<ByteRange>> utf8_sequences(const std::vector<CodepointRange>& ranges);

}  // namespace lockstep
