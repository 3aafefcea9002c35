// Hostile JSON Schemas: deep nesting, long $ref chains, huge objects and the worst cases of
// the schema algebra end in a LimitError naming the limit (or compile), within the
// EngineLimits, never in a crash, a hang or unbounded memory.
#include <algorithm>
#include <chrono>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "grammar/limits.h"
#include "schemas/json_document.h"
#include "schemas/tool_calls.h"
#include "tests/runtime/cli_runner.h"
#include "tests/schemas/compiled_schema.h"

namespace lockstep {
namespace {

using ojson = nlohmann::ordered_json;

using ScopedLimits = ScopedEngineLimits;

// The compilation's outcome: "compiled" (schema and grammar), the name of the limit it
// exceeded, or "schema error: <message>".
std::string outcome(const ojson& schema, JsonSchemaOptions options = {}) {
  try {
    const CompiledSchema c = compile_json_schema(schema, options);
    GrammarAutomaton::compile(c.grammar);
    return "compiled";
  } catch (const LimitError& e) {
    return e.limit();
  } catch (const SchemaError& e) {
    return std::string("schema error: ") + e.what();
  }
}

// The LimitError a compilation throws (fails the test when there is none).
LimitError limit_error(const ojson& schema) {
  try {
    compile_json_schema(schema);
  } catch (const LimitError& e) {
    return e;
  }
  ADD_FAILURE() << "no LimitError";
  return LimitError({}, "", 0, "");
}

// `wrap` applied `depth` times around `inner`, built without recursion.
template <class Wrap>
ojson nest(size_t depth, ojson inner, Wrap wrap) {
  for (size_t i = 0; i < depth; ++i) inner = wrap(std::move(inner));
  return inner;
}

ojson items(size_t depth) {
  return nest(depth, ojson::object(), [](ojson s) { return ojson{{"type", "array"}, {"items", std::move(s)}}; });
}

ojson ref_chain(size_t n) {
  ojson defs = ojson::object();
  for (size_t i = 0; i < n; ++i) defs["d" + std::to_string(i)] = {{"$ref", "#/$defs/d" + std::to_string(i + 1)}};
  defs["d" + std::to_string(n)] = ojson::object();
  return {{"$defs", defs}, {"$ref", "#/$defs/d0"}};
}

ojson nots(size_t depth) {
  return nest(depth, ojson::object(), [](ojson s) { return ojson{{"not", std::move(s)}}; });
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ---- 1. Nesting: items, $ref chains, not, raw arrays, properties, data, tools.

TEST(HostileSchema, DeepItemsStopAtTheNestingLimit) {
  const LimitError e = limit_error(items(2000));
  EXPECT_EQ(e.limit(), "nesting_depth");
  EXPECT_EQ(e.value(), 500u);
  ASSERT_TRUE(e.location().pointer);
  EXPECT_EQ(e.location().pointer->rfind("/items/items/", 0), 0u);
  EXPECT_NE(std::string(e.what()).find("--limit nesting_depth=N"), std::string::npos) << e.what();
  // Within the limit, the nesting compiles and is exact.
  const auto c = schema_test::compile_schema(items(300).dump(), schema_test::compact_options());
  EXPECT_TRUE(c.accepts(std::string(300, '[') + std::string(300, ']')));
  // The 299th array's items are arrays.
  EXPECT_FALSE(c.accepts(std::string(299, '[') + "1" + std::string(299, ']')));
}

TEST(HostileSchema, TheNestingLimitCountsSubSchemasNotTheirContainers) {
  // 499 levels of items below the root: 500 levels in all.
  EXPECT_EQ(outcome(items(499)), "compiled");
  EXPECT_EQ(outcome(items(500)), "nesting_depth");
  // properties and allOf hold sub-schemas: only the sub-schemas count.
  const ojson props = nest(499, ojson::object(), [](ojson s) { return ojson{{"properties", {{"a", std::move(s)}}}}; });
  EXPECT_EQ(outcome(props), "compiled");
  EXPECT_EQ(outcome({{"properties", {{"a", props}}}}), "nesting_depth");
}

TEST(HostileSchema, ALongRefChainStopsAtTheNestingLimit) {
  const LimitError e = limit_error(ref_chain(10000));
  EXPECT_EQ(e.limit(), "nesting_depth");
  EXPECT_NE(e.message().find("$ref hops"), std::string::npos) << e.what();
  // Each hop is a level: a chain of 400 compiles.
  EXPECT_EQ(outcome(ref_chain(400)), "compiled");
}

TEST(HostileSchema, DeepNotAndPropertiesStopAtTheNestingLimit) {
  EXPECT_EQ(limit_error(nots(7000)).limit(), "nesting_depth");
  const ojson props = nest(5000, ojson::object(), [](ojson s) {
    return ojson{{"type", "object"}, {"properties", {{"a", std::move(s)}}}};
  });
  const LimitError e = limit_error(props);
  EXPECT_EQ(e.limit(), "nesting_depth");
  EXPECT_EQ(e.location().pointer->rfind("/properties/a/properties/a/", 0), 0u);
}

TEST(HostileSchema, DeepDataAndArraysStopAtTheNestingLimit) {
  // Built and placed by moves only: nlohmann/json copies a document recursively (an
  // initializer list copies), too deep a recursion for 20,000 levels under the sanitizers.
  const auto arrays = [] {
    return nest(20000, ojson::array(), [](ojson a) {
      ojson outer = ojson::array();
      outer.push_back(std::move(a));
      return outer;
    });
  };
  const auto under = [](const char* key, ojson value) {
    ojson s = ojson::object();
    s[key] = std::move(value);
    return s;
  };
  // An array is not a schema: said before anything walks it.
  EXPECT_NE(outcome(arrays()).find("a schema must be an object or a boolean"), std::string::npos);
  // Inside a schema, under an unknown keyword or as a const value, it counts.
  EXPECT_EQ(outcome(under("x-deep", arrays())), "nesting_depth");
  EXPECT_EQ(outcome(under("const", arrays())), "nesting_depth");
  ojson values = ojson::array();
  values.push_back(arrays());
  EXPECT_EQ(outcome(under("enum", std::move(values))), "nesting_depth");
}

TEST(HostileSchema, DeepToolParametersStopAtTheNestingLimit) {
  const ojson tools = ojson::array({{{"type", "function"},
                                     {"function", {{"name", "f"}, {"parameters", items(2000)}}}}});
  try {
    compile_tool_calls(parse_tool_definitions(tools), {});
    FAIL() << "compiled";
  } catch (const LimitError& e) {
    EXPECT_EQ(e.limit(), "nesting_depth");
    EXPECT_EQ(e.location().pointer->rfind("/0/function/parameters/items/items/", 0), 0u) << e.what();
  }
}

// ---- 2. Many properties: linear work before the object_states limit.

// The text of an object schema with n integer properties p0, p1, ...
std::string many_properties(size_t n) {
  std::string text = R"({"type": "object", "required": ["p7"], "properties": {)";
  for (size_t i = 0; i < n; ++i) text += (i ? ", \"p" : "\"p") + std::to_string(i) + R"(": {"type": "integer"})";
  return text + "}}";
}

TEST(HostileSchema, HundredThousandPropertiesReadAndFailFast) {
  for (size_t n : {80000u, 100000u}) {
    const ojson schema = parse_json_document(many_properties(n), "many.json");
    ASSERT_EQ(schema["properties"].size(), n);
    EXPECT_EQ(schema["properties"].items().begin().key(), "p0");
    // In schema order each declared name is a state of the object's member machine.
    EXPECT_EQ(outcome(schema), "object_states") << n;
  }
}

TEST(HostileSchema, ManyPropertiesInAnyOrderCompile) {
  JsonSchemaOptions any;
  any.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  EXPECT_NO_THROW(compile_json_schema(parse_json_document(many_properties(20000), "many.json"), any));
}

size_t expression_nodes(const Expr& e) {
  size_t n = 1;
  for (const Expr& c : e.children) n += expression_nodes(c);
  return n;
}

// Past the exact obligations, an object in any order counts its required names, and every
// count offers every name, each to the next count: n counts of n names. They share one rule
// for that choice, so the grammar grows with n, not n^2 (587 required names of a Kubernetes
// schema were 1.2 million expression nodes). The language is the same: every name once in
// any order, each with its own value.
TEST(HostileSchema, ManyRequiredNamesInAnyOrderShareTheirChoice) {
  JsonSchemaOptions any = schema_test::compact_options();
  any.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  for (const size_t n : {size_t{40}, size_t{300}}) {
    ojson properties = ojson::object(), required = ojson::array();
    for (size_t i = 0; i < n; ++i) {
      properties["p" + std::to_string(i)] = {{"type", "integer"}, {"minimum", i}};
      required.push_back("p" + std::to_string(i));
    }
    const ojson schema = {{"type", "object"}, {"properties", properties}, {"required", required}};
    const auto c = schema_test::compile_schema(schema.dump(), any);
    size_t nodes = 0;
    for (const Rule& r : c.schema.grammar.rules) nodes += expression_nodes(r.body);
    EXPECT_LT(nodes, 60 * n) << n;  // spelled out per count: about 3 n^2
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(n)));
    auto object = [&](size_t skip, size_t low) {
      std::string text = "{";
      for (const size_t i : order) {
        if (i == skip) continue;
        if (text.size() > 1) text += ",";
        text += "\"p" + std::to_string(i) + "\":" + std::to_string(i == low ? i - 1 : i + 1);
      }
      return text + "}";
    };
    EXPECT_TRUE(c.accepts(object(n, n))) << n;
    EXPECT_FALSE(c.accepts(object(order[n / 2], n))) << n;  // a name missing
    EXPECT_FALSE(c.accepts(object(n, order[n / 3] == 0 ? order[1] : order[n / 3]))) << n;  // a value below its minimum
  }
}

TEST(HostileSchema, RepeatedKeysKeepTheirFirstPlaceAndLastValue) {
  const ojson doc = parse_json_document(R"({"a": 1, "b": 2, "a": {"c": [3]}})", "dup.json");
  EXPECT_EQ(doc.dump(), R"({"a":{"c":[3]},"b":2})");
  EXPECT_EQ(doc, ojson::parse(R"({"a": 1, "b": 2, "a": {"c": [3]}})"));
}

TEST(HostileSchema, CompactTextDropsOnlyTheWhitespaceBetweenTokens) {
  // The compiler's cache key: whitespace inside strings (and escaped quotes and backslashes
  // before it) is kept, the rest goes; the document read back is the same.
  const std::string text = "{ \"a b\" :\t[1 ,\r\n 2.50e1 , \"x\\\" y\\\\\", {\"\\u0020\": \" \" } ] ,\n\"c\": null }";
  const std::string compact = compact_json_text(text);
  EXPECT_EQ(compact, "{\"a b\":[1,2.50e1,\"x\\\" y\\\\\",{\"\\u0020\":\" \"}],\"c\":null}");
  EXPECT_EQ(ojson::parse(compact), ojson::parse(text));
  EXPECT_EQ(compact_json_text(compact), compact);
  EXPECT_EQ(compact_json_text(" \"\\\\\" "), "\"\\\\\"");  // a string ending in an escaped backslash
}

// ---- 3. Errors that name their place.

TEST(HostileSchema, ANumberBeyondADoubleNamesItsLineAndColumn) {
  const TempFile schema("lockstep_hostile_big." + std::to_string(::getpid()) + ".json",
                        "{\n  \"type\": \"number\",\n  \"minimum\": 1e400\n}\n");
  const CliResult r = run_cli({"check", "--schema", schema.path.string(), "--input", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(".json:3:14: error: the number 1e400 is beyond the range of a double"), std::string::npos)
      << r.err;
}

TEST(HostileSchema, ReadingNamesThePlaceOfBadNumbersAndSyntax) {
  auto error_of = [](const std::string& text) {
    try {
      parse_json_document(text, "s.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  EXPECT_EQ(error_of("{\n  \"minimum\": -1e400\n}"),
            "s.json:2:14: the number -1e400 is beyond the range of a double (about ±1.8e308)");
  EXPECT_EQ(error_of("{\"a\": [1, }").rfind("s.json:1:11: malformed JSON", 0), 0u) << error_of("{\"a\": [1, }");
  // Nesting is bounded as the document is read (without recursion).
  EXPECT_EQ(error_of(std::string(500, '[') + std::string(500, ']')), "parsed");
  EXPECT_EQ(error_of(std::string(100000, '[') + std::string(100000, ']')),
            "s.json: the JSON's nesting exceeds the limit nesting_depth = 500 (raise it with --limit nesting_depth=N)");
}

TEST(HostileSchema, TooManyAlternativesNameTheSchema) {
  // Each branch's complement is a union of records; their products exceed the limit.
  EngineLimits limits = engine_limits();
  limits.schema_alternatives = 8;
  ScopedLimits scoped(limits);
  ojson branches = ojson::array();
  for (int i = 0; i < 4; ++i) {
    branches.push_back({{"type", "object"},
                        {"properties", {{"k" + std::to_string(i), {{"type", "integer"}}}}},
                        {"required", {"k" + std::to_string(i)}},
                        {"minProperties", i}});
  }
  const ojson schema = {{"properties", {{"x", {{"oneOf", branches}}}}}};
  const LimitError e = limit_error(schema);
  EXPECT_EQ(e.limit(), "schema_alternatives");
  ASSERT_TRUE(e.location().pointer);
  EXPECT_EQ(e.location().pointer->rfind("/properties/x", 0), 0u) << e.what();
}

// ---- 4. Worst cases of the algebra: each compiles, or fails on a limit, quickly.

class HostileAlgebra : public ::testing::Test {
 protected:
  HostileAlgebra() : scoped_(lowered()) {}
  static EngineLimits lowered() {
    EngineLimits l = engine_limits();
    l.compile_ms = 5000;
    return l;
  }
  // Compiles or fails on a limit; prints the time (no wall-time assertion: the deadline
  // compile_ms is the bound).
  void expect_bounded(const ojson& schema, const char* name) {
    const auto start = std::chrono::steady_clock::now();
    const std::string result = outcome(schema);
    const double s = seconds_since(start);
    // Or the one bound that is no limit: an object's member machine tracks at most 63
    // obligations as bits (and 8 beyond plain required names).
    EXPECT_TRUE(result == "compiled" || result == "compile_ms" || result == "schema_alternatives" ||
                result == "nesting_depth" || result == "object_states" ||
                result.find("required-member conditions on one object") != std::string::npos)
        << name << ": " << result;
    std::printf("[ hostile ] %-28s %-22s %.2f s\n", name, result.c_str(), s);
  }

 private:
  ScopedLimits scoped_;
};

ojson object_with(const std::string& name, const ojson& value) {
  return {{"type", "object"}, {"properties", {{name, value}}}, {"required", {name}}};
}

// oneOf inside anyOf inside allOf, `levels` deep, each level with 3 branches of objects
// and strings, one of them the next level.
ojson combinators(int levels) {
  ojson s = {{"type", "string"}, {"maxLength", 5}};
  for (int i = levels - 1; i >= 0; --i) {
    const std::string k = "k" + std::to_string(i);
    switch (i % 3) {
      case 0:
        s = {{"allOf", {s, {{"type", {"object", "string"}}}, {{"properties", {{k, {{"type", "integer"}}}}}}}}};
        break;
      case 1:
        s = {{"anyOf", {s, object_with(k, {{"type", "string"}}), {{"type", "string"}, {"pattern", "^a" + k}}}}};
        break;
      default:
        s = {{"oneOf", {s, object_with(k, {{"type", "integer"}}), {{"type", "string"}, {"maxLength", 3}}}}};
    }
  }
  return s;
}

TEST_F(HostileAlgebra, CombinatorsSixteenDeep) { expect_bounded(combinators(16), "allOf/anyOf/oneOf x16"); }

TEST_F(HostileAlgebra, NestedNot) {
  expect_bounded(nots(50), "not x50");
  expect_bounded(nots(200), "not x200");
  EXPECT_EQ(outcome(nots(200)), "compiled");
}

TEST_F(HostileAlgebra, IfThenElseChain) {
  ojson s = {{"type", "integer"}};
  for (int i = 99; i >= 0; --i) {
    s = {{"if", {{"properties", {{"k" + std::to_string(i), {{"const", i}}}}}}},
         {"then", {{"required", {"a" + std::to_string(i)}}}},
         {"else", s}};
  }
  // Each level's else is an object with k_i ≠ i: the deepest records gather one obligation
  // per level, past those an object's member machine tracks (a SchemaError: no limit can
  // raise it).
  expect_bounded(s, "if/then/else chain x100");
  ojson short_chain = {{"type", "integer"}};
  for (int i = 29; i >= 0; --i) {
    short_chain = {{"if", {{"properties", {{"k" + std::to_string(i), {{"const", i}}}}}}},
                   {"then", {{"required", {"a" + std::to_string(i)}}}},
                   {"else", short_chain}};
  }
  expect_bounded(short_chain, "if/then/else chain x30");
}

TEST_F(HostileAlgebra, OneOfTwentyOverlappingObjects) {
  ojson branches = ojson::array();
  for (int i = 0; i < 20; ++i) {
    branches.push_back({{"type", "object"},
                        {"properties", {{"a", {{"type", "integer"}}}, {"k" + std::to_string(i), {{"type", "string"}}}}},
                        {"required", {"a"}}});
  }
  expect_bounded({{"oneOf", branches}}, "oneOf of 20 objects");
}

TEST_F(HostileAlgebra, TwentyDependentSchemas) {
  ojson deps = ojson::object();
  for (int i = 0; i < 20; ++i) {
    deps["p" + std::to_string(i)] = {{"required", {"q" + std::to_string(i)}},
                                     {"properties", {{"r" + std::to_string(i), {{"type", "integer"}}}}}};
  }
  expect_bounded({{"type", "object"}, {"dependentSchemas", deps}}, "dependentSchemas x20");
}

TEST_F(HostileAlgebra, CyclicRefUnderAllOf) {
  // The schema is its own conjunct before any value nests: no validator can evaluate it.
  const ojson s = ojson::parse(R"({"allOf": [{"$ref": "#"}], "properties": {"a": {"$ref": "#"}}})");
  EXPECT_NE(outcome(s).find("$ref cycle"), std::string::npos) << outcome(s);
  // Under a property, the same reference is recursion, and compiles.
  EXPECT_EQ(outcome(ojson::parse(R"({"type": "object", "properties": {"a": {"$ref": "#"}}})")), "compiled");
}

TEST_F(HostileAlgebra, RefChainOfTenThousand) { expect_bounded(ref_chain(10000), "$ref chain x10000"); }

TEST_F(HostileAlgebra, TheDeadlineStopsALongCompilation) {
  // Indexing 10,000 $defs takes more than 1 ms: the deadline fires at the first check, 256
  // normalizations in, before the chain reaches the nesting limit.
  EngineLimits l = engine_limits();
  l.compile_ms = 1;
  ScopedLimits scoped(l);
  const LimitError e = limit_error(ref_chain(10000));
  EXPECT_EQ(e.limit(), "compile_ms") << e.what();
  EXPECT_TRUE(e.location().pointer) << e.what();
}

// An enum is one keyword, but may be most of a document: the deadline is read inside it,
// and the error names it. 100 ms: far more than everything before the enum takes (a few
// ms; under sanitizers too), far less than reading, sorting and compiling 200,000 strings,
// so the deadline passes inside the enum whatever the machine's load. With the default
// limits, 100,000 random strings of 12 letters need a minimal automaton of more states
// than string_automaton_states allows, and the error says so, naming the enum.
TEST_F(HostileAlgebra, TheDeadlineStopsAHugeEnum) {
  auto schema_of = [](int n) {
    std::mt19937 rng(100000);
    ojson values = ojson::array();
    for (int i = 0; i < n; ++i) {
      std::string v(12, 'a');
      for (char& c : v) c = static_cast<char>('a' + rng() % 26);
      values.push_back(v);
    }
    return ojson{{"properties", {{"code", {{"enum", values}}}}}};
  };
  {
    const ojson schema = schema_of(100000);  // default limits
    const auto start = std::chrono::steady_clock::now();
    const LimitError e = limit_error(schema);
    EXPECT_LT(seconds_since(start), 5.0);
    EXPECT_EQ(e.limit(), "string_automaton_states") << e.what();
    ASSERT_TRUE(e.location().pointer) << e.what();
    EXPECT_EQ(*e.location().pointer, "/properties/code/enum") << e.what();
  }
  EngineLimits l = engine_limits();
  l.compile_ms = 100;
  l.string_automaton_states = 20'000'000;
  ScopedLimits scoped(l);
  const ojson schema = schema_of(200000);
  const auto start = std::chrono::steady_clock::now();
  const LimitError e = limit_error(schema);
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_EQ(e.limit(), "compile_ms") << e.what();
  ASSERT_TRUE(e.location().pointer) << e.what();
  EXPECT_EQ(*e.location().pointer, "/properties/code/enum") << e.what();
}

// Numbers of an enum are one walk over their digits, without the states of every point
// position and trailing zero that no value needs: 10,000 random 10-digit integers fit the
// default limits (their exponent forms do not: plain texts only, with a warning).
TEST(HostileSchema, TenThousandTenDigitIntegersCompile) {
  std::mt19937_64 rng(10);
  ojson values = ojson::array();
  for (int i = 0; i < 10000; ++i) values.push_back(1000000000 + static_cast<int64_t>(rng() % 9000000000ull));
  const auto c = schema_test::compile_schema(ojson{{"enum", values}}.dump());
  for (int i : {0, 4999, 9999}) {
    const std::string v = values[static_cast<size_t>(i)].dump();
    EXPECT_TRUE(c.accepts(v)) << v;
    EXPECT_TRUE(c.accepts(v + ".0")) << v;
    EXPECT_FALSE(c.accepts(v + "1")) << v;
    EXPECT_FALSE(c.accepts(v.substr(0, 9))) << v;
    EXPECT_FALSE(c.accepts(v.substr(0, 9) + "." + v.substr(9))) << v;
  }
  EXPECT_FALSE(c.accepts("999999999"));
}

}  // namespace
}  // namespace lockstep
