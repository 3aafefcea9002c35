// schemas/tool_calls.h — function (tool) calling: tool definitions → the grammar of a call.
//
// A call is the JSON object {"name": <one of the tools' names>, "arguments": <a value valid
// against that tool's parameters schema>}, name first (either member first with property
// order "any", except in pretty whitespace); with parallel calls, a JSON array of one or more
// such objects. Arguments are compiled with compile_json_schema, so every
// schema feature and option (whitespace, property order, lenient) applies.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "schemas/json_schema.h"

namespace lockstep {

struct ToolDefinition {
  std::string name;
  std::string description;
  /// JSON Schema of the arguments object ({"type":"object","additionalProperties":false}
  /// when the definition has none: a function without parameters).
  nlohmann::ordered_json parameters;
  /// JSON pointer of the definition in the document it came from (for error messages).
  std::string pointer;
};

/// Reads tool definitions from any of the forms the field uses:
///   - an OpenAI `tools` array: [{"type": "function", "function": {"name", "description",
///     "parameters"}}], or an object holding it under "tools" (a request body);
///   - an MCP `tools/list` result {"tools": [{"name", "description", "inputSchema"}]}, bare
///     or inside a JSON-RPC response {"result": {...}};
///   - bare function definitions [{"name", "description", "parameters"}] (OpenAI's legacy
///     `functions`, BFCL), one such object, or a BFCL entry {"function": [...]}.
/// BFCL's type names are mapped to JSON Schema (bfcl_to_json_schema). Throws SchemaError
/// naming the JSON pointer of a malformed definition or of a duplicated name.
std::vector<ToolDefinition> parse_tool_definitions(const nlohmann::ordered_json& document);

/// Maps the Berkeley Function Calling Leaderboard's parameter types to JSON Schema, in every
/// subschema: dict, HashMap, Hashtable → object; float, double → number; tuple, list,
/// ArrayList, Array, Queue, Stack → array; long, int, short, byte, Bigint → integer; bool,
/// Boolean → boolean; String, char → string; any, Any and "" → no type constraint. Two BFCL
/// conventions that JSON Schema would read as unsatisfiable are given BFCL's meaning: an
/// `enum` of scalars on an array constrains its items, and an `enum` of numeric strings on an
/// integer or number lists those numbers. Other keywords are kept as they are.
nlohmann::ordered_json bfcl_to_json_schema(const nlohmann::ordered_json& schema);

/// The grammar of one call to one of `tools` (or, with `parallel`, a JSON array of one or
/// more calls), with the whitespace and other options of `options`. Throws SchemaError with
/// the pointer of the definition (e.g. "/tools/3/function/parameters/properties/x: ...")
/// when a tool's parameters cannot be compiled, and on an empty list.
CompiledSchema compile_tool_calls(const std::vector<ToolDefinition>& tools, const JsonSchemaOptions& options = {},
                                  bool parallel = false);

}  // namespace lockstep
