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
//   - numbers with bounds, multipleOf or const are written without exponent;
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

/// A schema that cannot be compiled. what() reads "<JSON pointer>: <message>".
class SchemaError : public std::runtime_error {
 public:
  SchemaError(std::string pointer, const std::string& message);
  const std::string& pointer() const { return pointer_; }
  const std::string& message() const { return message_; }

 private:
  std::string pointer_;
  std::string message_;
};

struct JsonSchemaOptions {
  enum class Whitespace {
    kCompact,   ///< no whitespace between tokens
    kFlexible,  ///< JSON whitespace between tokens, runs of at most max_whitespace characters
    kPretty,    ///< newline and `indent` spaces per level before members and items, ": " after
                ///< keys; values nested 16 levels deep or more are written without whitespace
  };
  Whitespace whitespace = Whitespace::kFlexible;
  uint32_t max_whitespace = 20;
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
