// runtime/unicode.h — Unicode services for tokenizers (utf8proc: Unicode 15 data).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep::unicode {

/// NFC normalization (UAX #15). Text that is not valid UTF-8 is returned unchanged.
std::string nfc(std::string_view text);

/// The Unicode White_Space property (what \s means in Oniguruma and Rust regex).
bool is_whitespace(uint32_t cp);

/// A regex character-class body (without brackets) listing every White_Space code point,
/// for RE2, whose own \s is ASCII-only.
const std::string& whitespace_class_body();

}  // namespace lockstep::unicode
