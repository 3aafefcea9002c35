// schemas/tool_calls.cpp — see tool_calls.h.
#include "schemas/tool_calls.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "schemas/schema_compiler.h"
#include "schemas/schema_nesting.h"

namespace lockstep {

namespace {

using ojson = nlohmann::ordered_json;

const ojson& field(const ojson& o, const char* key, const std::string& pointer) {
  if (!o.is_object() || !o.contains(key)) throw SchemaError(pointer, fmt::format("expected a member \"{}\"", key));
  return o.at(key);
}

ToolDefinition read_function(const ojson& f, const std::string& pointer) {
  if (!f.is_object()) throw SchemaError(pointer, "a tool definition must be an object");
  ToolDefinition t;
  t.pointer = pointer;
  const ojson& name = field(f, "name", pointer);
  if (!name.is_string() || name.get<std::string>().empty()) {
    throw SchemaError(pointer + "/name", "a tool's name must be a non-empty string");
  }
  t.name = name.get<std::string>();
  if (f.contains("description") && f["description"].is_string()) t.description = f["description"];
  const char* key = f.contains("parameters") ? "parameters" : f.contains("inputSchema") ? "inputSchema" : nullptr;
  if (key) {
    schema::check_nesting(f.at(key), pointer + "/" + key);  // before the recursive conversion
    t.parameters = bfcl_to_json_schema(f.at(key));
    t.pointer = pointer + "/" + key;
  } else {
    t.parameters = {{"type", "object"}, {"additionalProperties", false}};
  }
  return t;
}

void read_list(const ojson& list, const std::string& pointer, std::vector<ToolDefinition>& out) {
  for (size_t i = 0; i < list.size(); ++i) {
    const ojson& e = list[i];
    const std::string p = fmt::format("{}/{}", pointer, i);
    if (e.is_object() && e.contains("function") && !e.contains("name")) {
      if (e.contains("type") && e["type"] != "function") {
        throw SchemaError(p + "/type", "only tools of type \"function\" can be called");
      }
      out.push_back(read_function(e["function"], p + "/function"));
    } else {
      out.push_back(read_function(e, p));
    }
  }
}

}  // namespace

std::vector<ToolDefinition> parse_tool_definitions(const ojson& doc) {
  std::vector<ToolDefinition> out;
  if (doc.is_array()) {
    read_list(doc, "", out);
  } else if (doc.is_object() && doc.contains("tools") && doc["tools"].is_array()) {
    read_list(doc["tools"], "/tools", out);
  } else if (doc.is_object() && doc.contains("result") && doc["result"].is_object() && doc["result"].contains("tools")) {
    read_list(field(doc["result"], "tools", "/result"), "/result/tools", out);
  } else if (doc.is_object() && doc.contains("function") && doc["function"].is_array()) {
    read_list(doc["function"], "/function", out);
  } else if (doc.is_object() && doc.contains("function") && doc["function"].is_object()) {
    out.push_back(read_function(doc["function"], "/function"));
  } else if (doc.is_object() && doc.contains("name")) {
    out.push_back(read_function(doc, ""));
  } else {
    throw SchemaError("", "expected tool definitions: an OpenAI tools array, an MCP tools/list result or function "
                          "definitions");
  }
  if (out.empty()) throw SchemaError("", "the list of tools is empty");
  std::set<std::string> names;
  for (const ToolDefinition& t : out) {
    if (!names.insert(t.name).second) throw SchemaError(t.pointer, fmt::format("the tool name '{}' is used twice", t.name));
  }
  return out;
}

ojson bfcl_to_json_schema(const ojson& schema) {
  if (!schema.is_object()) return schema;
  static const std::map<std::string, std::string> kTypes = {
      {"dict", "object"},   {"HashMap", "object"},  {"Hashtable", "object"}, {"float", "number"},
      {"double", "number"}, {"tuple", "array"},     {"list", "array"},       {"ArrayList", "array"},
      {"Array", "array"},   {"Queue", "array"},     {"Stack", "array"},      {"long", "integer"},
      {"int", "integer"},   {"short", "integer"},   {"byte", "integer"},     {"Bigint", "integer"},
      {"bool", "boolean"},  {"Boolean", "boolean"}, {"String", "string"},    {"char", "string"}};
  auto map_type = [&](const ojson& t, bool& any) -> ojson {
    if (!t.is_string()) return t;
    const std::string s = t;
    if (s == "any" || s == "Any" || s.empty()) any = true;
    const auto it = kTypes.find(s);
    return it != kTypes.end() ? ojson(it->second) : t;
  };
  ojson out = ojson::object();
  for (const auto& [k, v] : schema.items()) {
    if (k == "type") {
      bool any = false;
      if (v.is_array()) {
        ojson a = ojson::array();
        for (const auto& t : v) a.push_back(map_type(t, any));
        if (!any) out[k] = a;
      } else {
        ojson t = map_type(v, any);
        if (!any) out[k] = t;
      }
    } else if ((k == "properties" || k == "patternProperties" || k == "$defs" || k == "definitions" ||
                k == "dependentSchemas") &&
               v.is_object()) {
      ojson m = ojson::object();
      for (const auto& [name, s] : v.items()) m[name] = bfcl_to_json_schema(s);
      out[k] = m;
    } else if ((k == "anyOf" || k == "oneOf" || k == "allOf" || k == "prefixItems" || k == "items") && v.is_array()) {
      ojson a = ojson::array();
      for (const auto& s : v) a.push_back(bfcl_to_json_schema(s));
      out[k] = a;
    } else if (k == "items" || k == "additionalProperties" || k == "additionalItems" || k == "not" ||
               k == "contains" || k == "propertyNames" || k == "if" || k == "then" || k == "else") {
      out[k] = bfcl_to_json_schema(v);
    } else {
      out[k] = v;
    }
  }
  // BFCL conventions that JSON Schema would read as unsatisfiable (so nothing valid is lost):
  // an enum of scalars on an array constrains its items; an enum of numeric strings on an
  // integer or number lists numbers (BFCL's answers give them as numbers).
  if (out.contains("type") && out["type"].is_string() && out.contains("enum") && out["enum"].is_array() &&
      !out["enum"].empty()) {
    const std::string type = out["type"];
    const ojson& values = out["enum"];
    const bool scalars = std::none_of(values.begin(), values.end(), [](const ojson& v) { return v.is_array(); });
    if (type == "array" && scalars) {
      ojson items = out.contains("items") && out["items"].is_object() ? out["items"] : ojson::object();
      if (!items.contains("enum")) {
        items["enum"] = values;
        out["items"] = items;
        out.erase("enum");
      }
    } else if (type == "integer" || type == "number") {
      ojson numbers = ojson::array();
      for (const auto& v : values) {
        if (!v.is_string()) break;
        const ojson n = ojson::parse(v.get<std::string>(), nullptr, false);
        if (!n.is_number()) break;
        numbers.push_back(n);
      }
      if (numbers.size() == values.size()) out["enum"] = numbers;
    }
  }
  return out;
}

CompiledSchema compile_tool_calls(const std::vector<ToolDefinition>& tools, const JsonSchemaOptions& options,
                                  bool parallel) {
  if (tools.empty()) throw SchemaError("", "the list of tools is empty");
  using WS = JsonSchemaOptions::Whitespace;
  const bool pretty = options.whitespace == WS::kPretty;
  const uint32_t depth = parallel ? 1 : 0;
  CompiledSchema out;
  Grammar& g = out.grammar;
  uint32_t ws_rule = UINT32_MAX;
  if (options.whitespace == WS::kFlexible) {
    ws_rule = g.add_rule("ws", Expr::repeat(Expr::char_class({{' ', ' '}, {'\t', '\n'}, {'\r', '\r'}}), 0,
                                            options.max_whitespace),
                         {}, true);
  }
  auto ws = [&] { return ws_rule != UINT32_MAX ? Expr::rule_ref(ws_rule) : Expr::empty(); };
  auto lit = [](std::string s) { return Expr::literal(std::move(s)); };
  auto indent = [&](uint32_t d) { return std::string(d * options.indent, ' '); };
  std::vector<Expr> calls;
  for (size_t i = 0; i < tools.size(); ++i) {
    const ToolDefinition& t = tools[i];
    CompiledSchema args;
    try {
      schema::SchemaCompiler c(t.parameters, options);
      args = c.run(depth + 1, true);
    } catch (Error& e) {
      e.relocate(ErrorLocation::at_pointer(t.pointer + e.location().pointer.value_or("")));
      throw;
    }
    // "<pointer>: …" or "(root): …" within the parameters: the tool's pointer goes first.
    for (const auto& w : args.warnings) {
      out.warnings.push_back(w.rfind("(root):", 0) == 0 && !t.pointer.empty() ? t.pointer + w.substr(6) : t.pointer + w);
    }
    for (const auto& u : args.unenforced) out.unenforced.push_back(t.pointer + u);
    const uint32_t value = append_grammar(g, args.grammar, fmt::format("tool{}-", i));
    const std::string name = ojson(t.name).dump(-1, ' ', false, ojson::error_handler_t::strict);
    Expr call;
    if (pretty) {
      call = Expr::sequence({lit("{\n" + indent(depth + 1) + "\"name\": " + name + ",\n" + indent(depth + 1) +
                                 "\"arguments\": "),
                             Expr::rule_ref(value), lit("\n" + indent(depth) + "}")});
    } else {
      auto member = [&](const char* key, Expr v) {
        return Expr::sequence({lit(key), ws(), lit(":"), ws(), std::move(v)});
      };
      auto object = [&](Expr first, Expr second) {
        return Expr::sequence({lit("{"), ws(), std::move(first), ws(), lit(","), ws(), std::move(second), ws(), lit("}")});
      };
      call = object(member("\"name\"", lit(name)), member("\"arguments\"", Expr::rule_ref(value)));
      if (options.property_order == JsonSchemaOptions::PropertyOrder::kAny) {
        // Either order: the arguments are still those of the tool the name then names.
        call = Expr::choice({std::move(call),
                             object(member("\"arguments\"", Expr::rule_ref(value)), member("\"name\"", lit(name)))});
      }
    }
    calls.push_back(std::move(call));
  }
  const uint32_t call = g.add_rule("call", Expr::choice(std::move(calls)));
  Expr body;
  if (!parallel) {
    body = Expr::sequence({ws(), Expr::rule_ref(call), ws()});
  } else if (pretty) {
    body = Expr::sequence({lit("[\n" + indent(1)), Expr::rule_ref(call),
                           Expr::repeat(Expr::sequence({lit(",\n" + indent(1)), Expr::rule_ref(call)}), 0, kUnbounded),
                           lit("\n]")});
  } else {
    body = Expr::sequence({ws(), lit("["), ws(), Expr::rule_ref(call),
                           Expr::repeat(Expr::sequence({ws(), lit(","), ws(), Expr::rule_ref(call)}), 0, kUnbounded),
                           ws(), lit("]"), ws()});
  }
  g.root = g.add_rule("root", std::move(body));
  return out;
}

}  // namespace lockstep
