// Tool-call grammars: every function definition of BFCL v4 and every MCP tool snapshot
// compiles (strict mode), and the call grammar accepts exactly the calls it should.
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "automata/earley.h"
#include "schemas/tool_calls.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

using ojson = nlohmann::ordered_json;

bool accepts(const GrammarAutomaton& g, const std::string& text) {
  EarleyParser p(g);
  return p.advance(text) && p.accepting();
}

std::shared_ptr<const GrammarAutomaton> compile(const ojson& document, bool parallel = false) {
  JsonSchemaOptions options;
  options.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  return GrammarAutomaton::compile(compile_tool_calls(parse_tool_definitions(document), options, parallel).grammar);
}

// The function definitions of BFCL v4: the "function" lists of the question files (one
// JSON object per line) and the multi-turn function documents (one function per line).
std::vector<ojson> bfcl_functions() {
  std::vector<ojson> out;
  std::set<std::string> seen;
  auto add = [&](const ojson& f) {
    if (seen.insert(f.dump()).second) out.push_back(f);
  };
  const auto dir = test_data::shared("toolcalls/bfcl_v4");
  for (const auto& path : test_data::files_with_suffix(dir, ".json")) {
    std::istringstream in(test_data::read_file(path));
    for (std::string line; std::getline(in, line);) {
      const ojson entry = ojson::parse(line, nullptr, false);
      if (!entry.is_object() || !entry.contains("function")) continue;
      if (entry["function"].is_array()) {
        for (const auto& f : entry["function"]) add(f);
      } else {
        add(entry["function"]);
      }
    }
  }
  for (const auto& path : test_data::files_with_suffix(dir / "multi_turn_func_doc", ".json")) {
    std::istringstream in(test_data::read_file(path));
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) add(ojson::parse(line));
    }
  }
  return out;
}

TEST(ToolCalls, EveryBfclFunctionCompiles) {
  const auto functions = bfcl_functions();
  ASSERT_GT(functions.size(), 3000u);
  size_t compiled = 0;
  for (const auto& f : functions) {
    try {
      compile(f);
      ++compiled;
    } catch (const std::exception& e) {
      ADD_FAILURE() << f["name"] << ": " << e.what();
    }
  }
  std::printf("BFCL v4: %zu of %zu distinct function definitions compile\n", compiled, functions.size());
}

TEST(ToolCalls, EveryMcpToolCompilesAlone_AndEachSnapshotAsOneToolSet) {
  size_t tools = 0;
  for (const auto& path : test_data::files_with_suffix(test_data::shared("toolcalls/mcp_tools_list_snapshots"), ".json")) {
    const ojson doc = ojson::parse(test_data::read_file(path));
    ASSERT_TRUE(doc.contains("tools")) << path;
    EXPECT_NO_THROW(compile(doc, true)) << path;
    for (const auto& tool : doc["tools"]) {
      ++tools;
      EXPECT_NO_THROW(compile(ojson{{"tools", ojson::array({tool})}})) << path << ": " << tool["name"];
    }
  }
  EXPECT_GT(tools, 50u);
}

const char* kWeatherTools = R"([
  {"type": "function", "function": {"name": "get_weather", "description": "Weather now",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"},
      "unit": {"enum": ["c", "f"]}}, "required": ["city"], "additionalProperties": false}}},
  {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
    "properties": {"zone": {"type": "string", "format": "uuid"}}, "required": ["zone"]}}},
  {"type": "function", "function": {"name": "ping"}}
])";

TEST(ToolCalls, OneCallNamesAToolAndMatchesItsParameters) {
  const auto g = compile(ojson::parse(kWeatherTools));
  EXPECT_TRUE(accepts(*g, R"({"name":"get_weather","arguments":{"city":"Oslo"}})"));
  EXPECT_TRUE(accepts(*g, R"({"name":"get_weather","arguments":{"city":"Oslo","unit":"c"}})"));
  EXPECT_TRUE(accepts(*g, R"({"name":"ping","arguments":{}})"));
  EXPECT_TRUE(accepts(*g, R"({"name":"get_time","arguments":{"zone":"123e4567-e89b-12d3-a456-426614174000"}})"));
  // Another tool's arguments, an unknown tool, a missing required argument, arguments first.
  EXPECT_FALSE(accepts(*g, R"({"name":"get_weather","arguments":{"zone":"x"}})"));
  EXPECT_FALSE(accepts(*g, R"({"name":"get_weathe","arguments":{"city":"Oslo"}})"));
  EXPECT_FALSE(accepts(*g, R"({"name":"get_weather","arguments":{}})"));
  EXPECT_FALSE(accepts(*g, R"({"name":"get_weather","arguments":{"city":"Oslo","unit":"k"}})"));
  EXPECT_FALSE(accepts(*g, R"({"arguments":{"city":"Oslo"},"name":"get_weather"})"));
  EXPECT_FALSE(accepts(*g, R"({"name":"ping","arguments":{"x":1}})"));
  EXPECT_FALSE(accepts(*g, R"({"name":"get_time","arguments":{"zone":"not-a-uuid"}})"));
}

// JSON objects are unordered: with property order "any" the arguments may come first, and
// they are still those of the tool named after them.
TEST(ToolCalls, AnyPropertyOrderAcceptsTheArgumentsFirst) {
  JsonSchemaOptions options;
  options.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  const auto g = GrammarAutomaton::compile(
      compile_tool_calls(parse_tool_definitions(ojson::parse(kWeatherTools)), options).grammar);
  EXPECT_TRUE(accepts(*g, R"({"arguments": {"city": "Oslo"}, "name": "get_weather"})"));
  EXPECT_TRUE(accepts(*g, R"({"name": "get_weather", "arguments": {"unit": "c", "city": "Oslo"}})"));
  EXPECT_FALSE(accepts(*g, R"({"arguments": {"city": "Oslo"}, "name": "ping"})"));
  EXPECT_FALSE(accepts(*g, R"({"arguments": {"city": "Oslo"}, "name": "get_weather", "name": "get_weather"})"));
  EXPECT_FALSE(accepts(*g, R"({"arguments": {"city": "Oslo"}})"));
}

TEST(ToolCalls, ParallelCallsAreANonEmptyArray) {
  const auto g = compile(ojson::parse(kWeatherTools), true);
  EXPECT_TRUE(accepts(*g, R"([{"name":"ping","arguments":{}}])"));
  EXPECT_TRUE(accepts(*g, R"([{"name":"ping","arguments":{}},{"name":"get_weather","arguments":{"city":"Rome"}}])"));
  EXPECT_FALSE(accepts(*g, "[]"));
  EXPECT_FALSE(accepts(*g, R"({"name":"ping","arguments":{}})"));
}

TEST(ToolCalls, ReadsOpenAiMcpJsonRpcAndBareForms) {
  const ojson params = {{"type", "object"}, {"properties", {{"q", {{"type", "string"}}}}}};
  const std::vector<ojson> forms = {
      ojson::array({{{"type", "function"}, {"function", {{"name", "search"}, {"parameters", params}}}}}),
      {{"tools", ojson::array({{{"type", "function"}, {"function", {{"name", "search"}, {"parameters", params}}}}})}},
      {{"tools", ojson::array({{{"name", "search"}, {"inputSchema", params}}})}},
      {{"jsonrpc", "2.0"}, {"id", 1}, {"result", {{"tools", ojson::array({{{"name", "search"}, {"inputSchema", params}}})}}}},
      ojson::array({{{"name", "search"}, {"parameters", params}}}),
      {{"name", "search"}, {"parameters", params}},
  };
  for (const auto& form : forms) {
    const auto tools = parse_tool_definitions(form);
    ASSERT_EQ(tools.size(), 1u) << form.dump();
    EXPECT_EQ(tools[0].name, "search");
    EXPECT_EQ(tools[0].parameters, params) << form.dump();
  }
}

TEST(ToolCalls, MalformedDefinitionsNameThePointer) {
  try {
    parse_tool_definitions(ojson::parse(R"([{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}])"));
    FAIL() << "duplicate names accepted";
  } catch (const SchemaError& e) {
    EXPECT_EQ(e.pointer().rfind("/1", 0), 0u) << e.what();
  }
  try {
    compile(ojson::parse(R"([{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{"x":{"type":"string","minLength":5,"maxLength":2}},"required":["x"]}}}])"));
    FAIL() << "unsatisfiable parameters accepted";
  } catch (const SchemaError& e) {
    EXPECT_EQ(e.pointer(), "/0/function/parameters") << e.what();
    EXPECT_NE(e.message().find("/properties/x: minLength 5 > maxLength 2"), std::string::npos) << e.what();
  }
}

TEST(ToolCalls, WarningsNameThePointerInTheDefinitions) {
  JsonSchemaOptions options;
  const CompiledSchema c = compile_tool_calls(
      parse_tool_definitions(ojson::parse(R"([{"type":"function","function":{"name":"a","parameters":{
          "type":"object","requried":["x"],"properties":{"x":{"type":"string","maxLenght":3}}}}}])")),
      options, false);
  const std::vector<std::string> expected = {
      "/0/function/parameters: unknown keyword 'requried': did you mean 'required'?",
      "/0/function/parameters/properties/x: unknown keyword 'maxLenght': did you mean 'maxLength'?"};
  EXPECT_EQ(c.warnings, expected);
}

TEST(ToolCalls, BfclTypeNamesMapToJsonSchema) {
  const ojson bfcl = ojson::parse(R"({"type":"dict","properties":{
      "a":{"type":"float"},"b":{"type":"tuple","items":{"type":"integer"}},"c":{"type":"any"},
      "d":{"type":"dict","properties":{"e":{"type":"boolean"}}},"f":{"type":"long"},"g":{"type":"String"}}})");
  const ojson s = bfcl_to_json_schema(bfcl);
  EXPECT_EQ(s["type"], "object");
  EXPECT_EQ(s["properties"]["a"]["type"], "number");
  EXPECT_EQ(s["properties"]["b"]["type"], "array");
  EXPECT_FALSE(s["properties"]["c"].contains("type"));
  EXPECT_EQ(s["properties"]["d"]["type"], "object");
  EXPECT_EQ(s["properties"]["d"]["properties"]["e"]["type"], "boolean");
  EXPECT_EQ(s["properties"]["f"]["type"], "integer");
  EXPECT_EQ(s["properties"]["g"]["type"], "string");
  // BFCL's enums on arrays constrain the items; numeric strings on integers are numbers.
  const ojson e = bfcl_to_json_schema(ojson::parse(
      R"({"type":"dict","properties":{"m":{"type":"array","items":{"type":"string"},"enum":["a","b"]},
          "n":{"type":"integer","enum":["1","2"]},"o":{"type":"string","enum":["1"]}}})"));
  EXPECT_EQ(e["properties"]["m"], ojson::parse(R"({"type":"array","items":{"type":"string","enum":["a","b"]}})"));
  EXPECT_EQ(e["properties"]["n"]["enum"], ojson::parse("[1,2]"));
  EXPECT_EQ(e["properties"]["o"]["enum"], ojson::parse(R"(["1"])"));
}

}  // namespace
}  // namespace lockstep
