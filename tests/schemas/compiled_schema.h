// Test helper: a JSON Schema compiled to a grammar, with a byte-by-byte Earley acceptance
// check, its warnings, and the error message of a schema that does not compile.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "automata/earley.h"
#include "schemas/json_schema.h"

namespace lockstep::schema_test {

struct CompiledSchemaGrammar {
  CompiledSchema schema;
  std::shared_ptr<const GrammarAutomaton> grammar;

  bool accepts(const std::string& text) const {
    EarleyParser p(*grammar);
    return p.advance(text) && p.accepting();
  }
  // `text` is a prefix of some accepted text (the parser can read all of it).
  bool accepts_prefix(const std::string& text) const {
    EarleyParser p(*grammar);
    return p.advance(text);
  }
  bool warns(const std::string& text) const {
    for (const auto& w : schema.warnings) {
      if (w == text) return true;
    }
    return false;
  }
};

inline CompiledSchemaGrammar compile_schema(const std::string& schema, JsonSchemaOptions options = {}) {
  CompiledSchemaGrammar c{compile_json_schema(nlohmann::ordered_json::parse(schema), options), nullptr};
  c.grammar = GrammarAutomaton::compile(c.schema.grammar);
  return c;
}

inline JsonSchemaOptions compact_options() {
  JsonSchemaOptions o;
  o.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  return o;
}

// The SchemaError message, or "" when the schema compiles.
inline std::string schema_error_of(const std::string& schema, JsonSchemaOptions options = {}) {
  try {
    compile_json_schema(nlohmann::ordered_json::parse(schema), options);
  } catch (const SchemaError& e) {
    return e.what();
  }
  return "";
}

}  // namespace lockstep::schema_test
