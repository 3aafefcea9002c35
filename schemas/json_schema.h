// schemas/json_schema.h — public API of the schemas layer: JSON Schema → grammar.
//
// A schema is normalized into a disjunction of per-type constraint records (null, boolean,
// numbers, strings, arrays, objects), where allOf is intersection, not is complement,
// if/then/else is (if ∧ then) ∨ (¬if ∧ else) and oneOf is each branch ∧ ¬(the others).
// String and number constraints are automata (char_dfa.h), so patterns, lengths, formats,
// bounds and multiples combine exactly (a code point above U+FFFF, raw or as an escaped
// surrogate pair, is one code point); array items and property values stay lazy
// sub-schemas that become grammar rules (recursion included). The grammar then accepts
// exactly the JSON texts of valid instances, up to these documented restrictions:
//   - under bounds, multipleOf, the integer type or a numeric const/enum, a number in
//     exponent notation is decided exactly while its mantissa is zero or has at most 20
//     integer digits and a fraction that is empty, exactly "0", or ends in a non-zero digit
//     at most 20 places after the point (any exponent: schemas/number_language.h); beyond
//     that it may be rejected, and `not` rejects it too; a multipleOf whose automaton would
//     be too large accepts plain texts only (with a warning);
//   - keys are not checked for duplicates (JSON texts from a parser's object have none);
//     on an object with more than 8 required-member conditions, required names are
//     counted rather than tracked one by one, so there a repeated required key could stand
//     in for a missing one.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/grammar.h"

namespace lockstep {

/// A schema that cannot be compiled. what() reads "<JSON pointer>: <message>" ("(root)" for
/// the whole schema; the file, when known, in front).
class SchemaError : public Error {
 public:
  SchemaError(std::string pointer, const std::string& message)
      : Error(ErrorLocation::at_pointer(std::move(pointer)), message) {}
  const std::string& pointer() const { return *location().pointer; }
};

struct JsonSchemaOptions {
  enum class Whitespace {
    kCompact,   ///< no whitespace between tokens
    kFlexible,  ///< JSON whitespace between tokens, runs of at most max_whitespace characters
    kPretty,    ///< newline and `indent` spaces per level before members and items, ": " after
                ///< keys; values nested 16 levels deep or more are written without whitespace
  };
  Whitespace whitespace = Whitespace::kFlexible;
  /// Longest run of flexible whitespace: kUnbounded (the default) is JSON's own language
  /// (RFC 8259 §2); generation bounds it (`generate --max-whitespace`, default 8).
  uint32_t max_whitespace = kUnbounded;
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
  /// tool-call arguments included) is intersected with canonical_numbers()
  /// (schemas/number_language.h): no leading zeros, no negative zero, a fraction ending in a
  /// non-zero digit or exactly ".0", at most 17 significant digits, exponent form only as
  /// d.ddde±X with an exponent a double can have (1 to 324, "06" as Python writes it). Where
  /// that leaves no text (the schema's bounds or multipleOf need more digits), that number
  /// keeps its exact language. Off for
  /// checking: a valid document may write its numbers any way JSON allows.
  bool canonical_numbers = false;
};

struct CompiledSchema {
  Grammar grammar;
  /// "<pointer>: <message>" for things the user should know: unknown formats, places
  /// where the grammar is stricter than the schema.
  std::vector<std::string> warnings;
  /// Lenient mode: "<pointer>: <keyword>" for every keyword that is not enforced.
  std::vector<std::string> unenforced;
};

/// Compiles `schema` (a JSON Schema document, parsed with key order kept: the order of
/// `properties` is the default property order). Throws SchemaError naming the JSON pointer
/// of an unsupported or malformed keyword (unless lenient), of an unresolvable $ref, or of
/// an unsatisfiable schema.
CompiledSchema compile_json_schema(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options = {});

/// The grammar of any JSON value (RFC 8259), with the given whitespace.
Grammar json_value_grammar(const JsonSchemaOptions& options = {});

}  // namespace lockstep
