// grammar/utf8.h — UTF-8 encoding and decoding (RFC 3629) shared by the front ends.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep::utf8 {

/// Appends the UTF-8 encoding of `cp` (must be <= U+10FFFF and not a surrogate).
void append(std::string& out, uint32_t cp);

inline std::string encode(uint32_t cp) {
  std::string s;
  append(s, cp);
  return s;
}

/// Decodes the code point starting at text[pos]. On success returns the code point and
/// advances `pos`; on an invalid or truncated sequence returns kInvalid and leaves `pos`.
inline constexpr uint32_t kInvalid = 0xFFFFFFFF;
uint32_t decode(std::string_view text, size_t& pos);

/// True when `text` is entirely valid UTF-8.
bool is_valid(std::string_view text);

}  // namespace lockstep::utf8
