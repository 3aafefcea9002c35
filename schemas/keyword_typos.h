// schemas/keyword_typos.h — keys of a schema object that look like misspelled keywords.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "schemas/schema_model.h"

namespace lockstep::schema {

/// Optimal string alignment distance (Damerau–Levenshtein where no substring is edited
/// twice): insertions, deletions, substitutions and swaps of adjacent characters, each 1.
/// Case-sensitive, except that two strings differing only in case are at distance 1.
size_t keyword_distance(std::string_view a, std::string_view b);

/// The keyword `key` is likely a misspelling of, or "" when none: `key` is no keyword or
/// annotation of drafts 4 to 2020-12 (nor OpenAPI's `nullable`, `example`, …), is at least
/// 4 characters long, does not start with "x-", "_" or "@", and is at distance at most 1
/// from a keyword of at least 4 characters, or 2 when both are longer than 5 characters. A
/// key starting with "$" is only compared with the "$" keywords, other keys with the others,
/// and only with keywords that take a value of `value`'s JSON type. ("inclusiveMinimum" and
/// "inclusiveMaximum" get "minimum" and "maximum".)
std::string likely_keyword(std::string_view key, const json& value);

}  // namespace lockstep::schema
