// schemas/string_lengths.h — recognizing a length-only string automaton (internal).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "grammar/char_dfa.h"

namespace lockstep::schema {

/// Strings whose only constraint is a length bound above this many code points are written
/// as blocks of exactly kLengthBlock code points and a tail (schema_grammar.cpp; why 512:
/// docs/schemas.md).
inline constexpr uint32_t kLengthBlock = 512;

/// (lo, hi) when `d` is exactly C{lo,hi} (hi = kUnbounded for no upper bound): a chain of
/// states each reading any code point into the next, final from lo on, ending at hi or
/// looping on its last state. "Any code point" is one fixed set of ranges, `ranges`
/// (U+0000..U+10FFFF, or without the surrogates). An automaton with CharDfa::lengths()
/// (length(), or length_range() without a chain) answers from them at once.
std::optional<std::pair<uint32_t, uint32_t>> length_bounds(const CharDfa& d, std::vector<CodepointRange>& ranges);

}  // namespace lockstep::schema
