// automata/json_escapes.h — the \uXXXX escapes of JSON strings (RFC 8259 §7) as byte ranges.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "automata/utf8_ranges.h"

namespace lockstep {

/// Four hex digits, each a range of digit values (0..15).
using HexDigits = std::array<std::pair<uint32_t, uint32_t>, 4>;

/// 4-hex-digit strings with values lo..hi (at most 0xFFFF), as per-digit ranges (the UTF-8
/// range split in base 16).
std::vector<HexDigits> hex_sequences(uint32_t lo, uint32_t hi);

/// The bytes spelling the hex digits d0..d1 in either case ('0'-'9', 'A'-'F', 'a'-'f'):
/// sorted, disjoint ranges.
std::vector<ByteRange> hex_digit_bytes(uint32_t d0, uint32_t d1);

}  // namespace lockstep
