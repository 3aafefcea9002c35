// Schema warnings that are not errors: a sub-schema that can never match is dropped
// (only a schema matching nothing at all is an error), and likely typos of keywords.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/compiled_grammar.h"
#include "automata/earley.h"
#include "schemas/json_schema.h"

namespace lockstep {
namespace {

using ojson = nlohmann::ordered_json;

struct Compiled {
  CompiledSchema schema;
  std::shared_ptr<const CompiledGrammar> grammar;
  bool accepts(const std::string& text) const {
    EarleyParser p(*grammar);
    return p.advance(text) && p.accepting();
  }
  bool warns(const std::string& text) const {
    for (const auto& w : schema.warnings) {
      if (w == text) return true;
    }
    return false;
  }
};

Compiled compile(const std::string& schema, JsonSchemaOptions options = {}) {
  Compiled c{compile_json_schema(ojson::parse(schema), options), nullptr};
  c.grammar = CompiledGrammar::compile(c.schema.grammar);
  return c;
}

std::string error_of(const std::string& schema) {
  try {
    compile_json_schema(ojson::parse(schema));
  } catch (const SchemaError& e) {
    return e.what();
  }
  return "";
}

std::string warnings_of(const Compiled& c) {
  std::string s;
  for (const auto& w : c.schema.warnings) s += w + "\n";
  return s;
}

// JSON values of every type, plain and nested.
const char* const kValues[] = {"null", "true", "false", "0", "-7", "3.25", "\"\"", "\"abc\"", "\"abcdef\"",
                               "[]", "[1,\"x\"]", "{}", "{\"a\":[null]}"};

TEST(NeverMatchingSchemas, AnAnyOfBranchThatCannotMatchIsDropped) {
  const Compiled c = compile(R"({"anyOf":[{"type":"string","minLength":5,"maxLength":3},{"type":"integer"}]})");
  EXPECT_TRUE(c.warns("/anyOf/0: minLength 5 > maxLength 3: this schema matches no string")) << warnings_of(c);
  for (const char* v : {"0", "-7", "12345678901234567890", "1.0"}) EXPECT_TRUE(c.accepts(v)) << v;
  for (const char* v : {"3.25", "\"abcd\"", "\"abcdef\"", "\"\"", "null", "true", "[]", "{}"}) {
    EXPECT_FALSE(c.accepts(v)) << v;
  }
}

TEST(NeverMatchingSchemas, NotOfASchemaThatCannotMatchAcceptsEverything) {
  const Compiled c = compile(R"({"not":{"type":"string","minLength":5,"maxLength":3}})");
  EXPECT_TRUE(c.warns("/not: minLength 5 > maxLength 3: this schema matches no string")) << warnings_of(c);
  for (const char* v : kValues) EXPECT_TRUE(c.accepts(v)) << v;
  EXPECT_FALSE(c.accepts("[1,]"));  // still JSON
}

TEST(NeverMatchingSchemas, EachContradictionDropsItsType) {
  struct Case {
    const char* schema;
    const char* warning;
    std::vector<const char*> valid, invalid;
  };
  const Case cases[] = {
      {R"({"anyOf":[{"type":"array","minItems":3,"maxItems":1},{"type":"null"}]})",
       "/anyOf/0: minItems 3 > maxItems 1: this schema matches no array", {"null"}, {"[]", "[1,2]", "[1,2,3]"}},
      {R"({"anyOf":[{"type":"object","minProperties":2,"maxProperties":1},{"type":"boolean"}]})",
       "/anyOf/0: minProperties 2 > maxProperties 1: this schema matches no object", {"true", "false"},
       {"{}", R"({"a":1})", R"({"a":1,"b":2})"}},
      {R"({"anyOf":[{"type":"array","contains":{"type":"integer"},"minContains":2,"maxContains":1},{"type":"string"}]})",
       "/anyOf/0: minContains 2 > maxContains 1: this schema matches no array", {"\"x\""}, {"[]", "[1]", "[1,2]"}},
      {R"({"anyOf":[{"enum":[]},{"type":"string"}]})", "/anyOf/0/enum: the enum is empty: this schema matches no value",
       {"\"x\""}, {"null", "1", "[]"}},
      // Without "type", only that type is dropped: other values satisfy the bounds.
      {R"({"minLength":5,"maxLength":3})", "(root): minLength 5 > maxLength 3: this schema matches no string",
       {"1", "null", "[]", "{}"}, {"\"abcd\"", "\"\""}},
      // A property whose value matches nothing may only be absent.
      {R"({"type":"object","properties":{"a":{"type":"string","minLength":2,"maxLength":1}}})",
       "/properties/a: minLength 2 > maxLength 1: this schema matches no string", {"{}", R"({"b":"x"})"},
       {R"({"a":"x"})", R"({"a":"xy"})"}},
      // An array whose items match nothing may only be empty.
      {R"({"type":"array","items":{"type":"object","maxProperties":0,"minProperties":1}})",
       "/items: minProperties 1 > maxProperties 0: this schema matches no object", {"[]"}, {"[{}]", "[{\"a\":1}]"}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.schema);
    const Compiled c = compile(k.schema);
    EXPECT_TRUE(c.warns(k.warning)) << warnings_of(c);
    for (const char* v : k.valid) EXPECT_TRUE(c.accepts(v)) << v;
    for (const char* v : k.invalid) EXPECT_FALSE(c.accepts(v)) << v;
  }
}

TEST(NeverMatchingSchemas, ASchemaMatchingNothingIsStillAnError) {
  const std::string unsatisfiable = "(root): the schema is unsatisfiable: no JSON value is valid";
  // The error repeats why: the contradiction's pointer and bounds.
  EXPECT_EQ(error_of(R"({"type":"string","minLength":5,"maxLength":3})"),
            unsatisfiable + " ((root): minLength 5 > maxLength 3: this schema matches no string)");
  EXPECT_EQ(error_of(R"({"allOf":[{"type":"string"},{"type":"integer"}]})"), unsatisfiable);
  EXPECT_EQ(error_of(R"({"enum":[]})").rfind(unsatisfiable, 0), 0u) << error_of(R"({"enum":[]})");
  EXPECT_EQ(error_of(R"({"anyOf":[{"type":"string","minLength":5,"maxLength":3},{"type":"array","minItems":2,"maxItems":1}]})")
                .rfind(unsatisfiable, 0),
            0u);
  const std::string required = error_of(
      R"({"type":"object","properties":{"x":{"type":"string","minLength":5,"maxLength":2}},"required":["x"]})");
  EXPECT_EQ(required.rfind(unsatisfiable, 0), 0u) << required;
  EXPECT_NE(required.find("/properties/x: minLength 5 > maxLength 2"), std::string::npos) << required;
}

TEST(NeverMatchingSchemas, MalformedBoundsStayErrors) {
  EXPECT_EQ(error_of(R"({"anyOf":[{"minLength":-1},{"type":"integer"}]})").rfind("/anyOf/0/minLength:", 0), 0u);
  EXPECT_EQ(error_of(R"({"not":{"maxItems":"3"}})").rfind("/not/maxItems:", 0), 0u);
  EXPECT_EQ(error_of(R"({"anyOf":[{"minProperties":1.5},{"type":"null"}]})").rfind("/anyOf/0/minProperties:", 0), 0u);
  EXPECT_EQ(error_of(R"({"anyOf":[{"enum":3},{"type":"null"}]})").rfind("/anyOf/0/enum:", 0), 0u);
}

}  // namespace
}  // namespace lockstep
