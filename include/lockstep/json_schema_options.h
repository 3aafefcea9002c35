// include/lockstep/json_schema_options.h — how a JSON Schema (or a tool list) becomes a
// grammar: whitespace, property order, strictness, draft, formats, number spelling.
#pragma once

#include <cstdint>
#include <string>

namespace lockstep {

struct JsonSchemaOptions {
  enum class Whitespace {
    kCompact,   ///< no whitespace between tokens
    kFlexible,  ///< JSON whitespace between tokens, runs of at most max_whitespace characters
    kPretty,    ///< newline and `indent` spaces per level before members and items, ": " after
                ///< keys; values nested 16 levels deep or more are written without whitespace
  };
  Whitespace whitespace = Whitespace::kFlexible;
  /// Longest run of flexible whitespace: UINT32_MAX (the default) is JSON's own language
  /// (RFC 8259 §2); generation bounds it (`generate --max-whitespace`, default 8).
  uint32_t max_whitespace = UINT32_MAX;
  uint32_t indent = 2;
  enum class PropertyOrder {
    kSchema,  ///< properties in the order `properties` lists them, then any others
    kAny,     ///< any order (JSON Schema does not constrain it)
  };
  PropertyOrder property_order = PropertyOrder::kSchema;
  /// Treat every object as if it had "additionalProperties": false.
  bool forbid_additional_properties = false;
  /// Compile anyway when a keyword cannot be enforced, listing it in unenforced.
  bool lenient = false;
  /// Enforce `format` (default; 2020-12's format-assertion vocabulary) or treat it as an
  /// annotation (the format-annotation default of drafts 2019-09 and 2020-12).
  bool assert_formats = true;
  /// Draft when the schema has no $schema: "2020-12", "2019-09", "7", "6" or "4".
  std::string default_draft = "2020-12";
  /// Generation: write numbers as JSON serializers do. Every number (constrained or not,
  /// tool-call arguments included) is intersected with the canonical number language
  /// (docs/schemas.md): no leading zeros, no negative zero, a fraction ending in a
  /// non-zero digit or exactly ".0", at most 17 significant digits, exponent form only as
  /// d.ddde±X with an exponent a double can have (1 to 324, "06" as Python writes it). Where
  /// that leaves no text (the schema's bounds or multipleOf need more digits), that number
  /// keeps its exact language. Off for
  /// checking: a valid document may write its numbers any way JSON allows.
  bool canonical_numbers = false;
};

}  // namespace lockstep
