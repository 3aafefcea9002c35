// schemas/json_prefix.h — where a prefix of a JSON text ends: the JSON pointer of the value being read.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lockstep {

struct JsonPrefixPosition {
  enum class Place {
    kBeforeValue,  ///< a value may start here (after '[', ',' in an array, ':', or at the start)
    kInValue,      ///< inside a string, number, true, false or null (from token_start)
    kBeforeKey,    ///< a member name may start here (after '{' or ',' in an object)
    kInKey,        ///< inside a member name (from token_start; key holds it so far)
    kAfterKey,     ///< after a member name, before its ':'
    kAfterValue,   ///< after a complete value: ',' or the container's end may follow
  };
  Place place = Place::kBeforeValue;
  /// JSON pointer (RFC 6901) of the value being read: the value itself before and inside
  /// it, and after a member name; the object's own before and inside a member name; the
  /// container's own after a complete member or item ("" for the root).
  std::string pointer;
  /// kInKey: the member name read so far, escapes decoded (a trailing partial escape or
  /// UTF-8 sequence left out). kAfterKey: the whole name.
  std::string key;
  /// kInValue and kInKey: the byte offset where the token began; npos otherwise.
  size_t token_start = std::string_view::npos;
  /// True when inside a string (a value or a name), where whitespace is text.
  bool in_string = false;
  /// False when the text is not the beginning of any JSON text; the other fields then
  /// describe the position before the byte at `invalid_at`.
  bool valid = true;
  size_t invalid_at = std::string_view::npos;
};

/// Scans `prefix`, the beginning of a JSON text (RFC 8259), and says where it ends. Only
/// the structure is followed (brackets, member names, commas, token boundaries); the
/// spelling of numbers, literals and escapes is not checked.
JsonPrefixPosition scan_json_prefix(std::string_view prefix);

/// One reference token of a JSON pointer: '~' as "~0", '/' as "~1".
std::string json_pointer_token(std::string_view name);

}  // namespace lockstep
