// grammar/unicode.h — Unicode data for the front ends and the tokenizers (utf8proc:
// UnicodeData general categories, White_Space, simple case folding, NFC).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace lockstep::unicode {

/// NFC normalization (UAX #15). Text that is not valid UTF-8 is returned unchanged.
std::string nfc(std::string_view text);

/// The Unicode White_Space property (what \s means in Oniguruma and Rust regex).
bool is_whitespace(uint32_t cp);

/// A regex character-class body (without brackets) listing every White_Space code point,
/// for RE2, whose own \s is ASCII-only.
const std::string& whitespace_class_body();

/// Code points of a general category by its short name: one letter ("L", "N", "P", "S",
/// "Z", "C", "M") for the union of its subcategories, or two ("Lu", "Nd", "Zs", …), or
/// "L&"/"LC" for cased letters. Sorted, merged ranges; empty for an unknown name.
std::vector<CodepointRange> general_category(std::string_view name);

/// The code points that match `cp` case-insensitively, `cp` included (its simple
/// case-folding orbit, CaseFolding.txt status C and S): for 'k', {'K', 'k', U+212A KELVIN
/// SIGN}. Empty when `cp` has no case variants.
std::span<const uint32_t> case_variants(uint32_t cp);

}  // namespace lockstep::unicode
