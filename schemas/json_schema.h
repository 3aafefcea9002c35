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
//     be too large, or a Boolean combination of them past the schema's budget for set
//     operations (schemas/number_sets.h), accepts plain texts only (with a warning);
//   - keys are not checked for duplicates (JSON texts from a parser's object have none),
//     except that in any order a required name tracked by itself is read once;
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
#include "lockstep/json_schema_options.h"

namespace lockstep {

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
