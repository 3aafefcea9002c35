// schemas/json_document.h — reading a JSON document (a schema, tool definitions) from text.
//
// nlohmann's own parse() of an ordered_json object looks for each key among the keys read
// so far: quadratic, 80,000 properties took a minute. This reader keeps a hash of each open
// object's keys instead. It reads with simdjson first (several times faster than nlohmann's
// lexer), recursing at most min(nesting_depth, 1,024) + 1 levels, and falls back to
// nlohmann's parser, which does not recurse, for what simdjson refuses: every error comes
// from nlohmann's reading. A value inside more than EngineLimits::nesting_depth objects and
// arrays is a LimitError naming the file.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "grammar/errors.h"

namespace lockstep {

/// The document `text` holds. A repeated key keeps its first place and its last value, as
/// nlohmann's parse() does. Throws Error at `name`:line:column for malformed JSON and for a
/// number beyond the range of a double, LimitError("nesting_depth") at `name` for nesting.
nlohmann::ordered_json parse_json_document(const std::string& text, const std::string& name);

/// The document `text` holds, read as parse_json_document reads it, with nlohmann's
/// parse_error (naming the byte) for malformed JSON and no limit on nesting, as
/// ordered_json::parse, in time linear in the text; a number beyond a double's range is an
/// Error naming the number and its line:column (nlohmann's out_of_range has no place).
nlohmann::ordered_json read_json(std::string_view text);

/// Valid JSON `text` without its insignificant whitespace (RFC 8259 §2: space, tab, line
/// feed, carriage return between tokens); strings, numbers and key order as written. Two
/// texts of one document written apart only by that whitespace give the same result, in
/// one pass over the bytes (simdjson::minify; serializing the parsed document costs several
/// times its reading). For text that is not valid JSON, some string that depends on it alone.
std::string compact_json_text(std::string_view text);

}  // namespace lockstep
