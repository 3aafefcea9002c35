// Schema warnings that are not errors: a sub-schema that can never match is dropped
// (only a schema matching nothing at all is an error), and likely typos of keywords.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "schemas/json_schema.h"
#include "schemas/keyword_typos.h"
#include "tests/schemas/compiled_schema.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

using ojson = nlohmann::ordered_json;

using Compiled = schema_test::CompiledSchemaGrammar;
Compiled compile(const std::string& schema, JsonSchemaOptions options = {}) {
  return schema_test::compile_schema(schema, options);
}
std::string error_of(const std::string& schema) { return schema_test::schema_error_of(schema); }

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

TEST(KeywordTypos, OptimalStringAlignmentDistance) {
  using schema::keyword_distance;
  EXPECT_EQ(keyword_distance("kitten", "sitting"), 3u);  // Levenshtein's example
  EXPECT_EQ(keyword_distance("CA", "ABC"), 3u);          // 2 for unrestricted Damerau–Levenshtein
  EXPECT_EQ(keyword_distance("maxLenght", "maxLength"), 1u);
  EXPECT_EQ(keyword_distance("requried", "required"), 1u);
  EXPECT_EQ(keyword_distance("maxlength", "maxLength"), 1u);
  EXPECT_EQ(keyword_distance("MAXLENGTH", "maxLength"), 1u);  // a difference of case only
  EXPECT_EQ(keyword_distance("MAXLENGHT", "maxLength"), 8u);  // otherwise case-sensitive
  EXPECT_EQ(keyword_distance("", "type"), 4u);
  EXPECT_EQ(keyword_distance("type", "type"), 0u);
}

TEST(KeywordTypos, LikelyKeywords) {
  struct Case {
    const char *key, *value, *keyword;
  };
  const Case cases[] = {
      {"maxLenght", "3", "maxLength"},
      {"requried", R"(["a"])", "required"},
      {"propertes", "{}", "properties"},
      {"additonalProperties", "false", "additionalProperties"},
      {"minimun", "0", "minimum"},
      {"maxlength", "3", "maxLength"},
      {"MINIMUM", "0", "minimum"},
      {"$def", "{}", "$defs"},
      {"$refs", R"("#/a")", "$ref"},
      {"types", R"("string")", "type"},
      {"type:", R"("string")", "type"},
      {"descrption", R"("text")", "description"},
      {"definition", "{}", "definitions"},
      {"inclusiveMinimum", "0", "minimum"},  // not its opposite, exclusiveMinimum
      {"patternProperty", "{}", ""},         // 3 edits
      {"tpyes", R"("string")", ""},          // 2 edits from a 4-character keyword
      {"typ", R"("string")", ""},            // shorter than 4 characters
      {"x-maxLenght", "3", ""},              // an extension
      {"$maxLength", "3", ""},               // "$" keys only near "$" keywords
      {"name", R"("n")", ""},
      {"example", "1", ""},  // OpenAPI's
      {"nullable", "true", ""},
      // Tuned on JSONSchemaBench's development split: deliberate keys, not typos.
      {"_format", R"("date")", ""},    // switched off
      {"@type", R"("Thing")", ""},     // JSON-LD
      {"readonly", "true", ""},        // JSON Editor
      {"comment", R"("text")", ""},    // not "$comment"
      {"form", R"("text")", ""},       // 2 edits from "format", but 4 characters long
      {"note", "{}", ""},              // no suggestion shorter than 4 characters ("not")
      {"definition", R"("text")", ""},  // a value the keyword cannot take
      {"multiple", "false", ""},        //
      {"maxLenght", R"("3")", ""},      //
  };
  for (const Case& c : cases) {
    EXPECT_EQ(schema::likely_keyword(c.key, ojson::parse(c.value)), c.keyword) << c.key << ": " << c.value;
  }
}

// The meta-schemas (the copies ajv ships, json-schema.org's text) list every keyword of
// drafts 6 to 2020-12 as properties; none may be reported. Draft 4's are listed here.
TEST(KeywordTypos, NoKeywordOfAnyDraftIsReported) {
  const std::filesystem::path refs = std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "tests/node/node_modules/ajv/dist/refs";
  ASSERT_TRUE(std::filesystem::exists(refs)) << "run scripts/install-deps.sh";
  size_t names = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(refs)) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".json" || file == "data.json" || file == "json-schema-secure.json") continue;
    const auto meta = ojson::parse(test_data::read_file(entry.path()));
    if (!meta.contains("properties")) continue;
    for (const auto& [name, sub] : meta["properties"].items()) {
      (void)sub;
      ++names;
      EXPECT_EQ(schema::likely_keyword(name, ojson()), "") << entry.path().string() << ": " << name;
    }
  }
  EXPECT_GT(names, 60u);
  for (const char* k : {"id", "$schema", "title", "description", "default", "multipleOf", "maximum",
                        "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern",
                        "additionalItems", "items", "maxItems", "minItems", "uniqueItems", "maxProperties",
                        "minProperties", "required", "additionalProperties", "definitions", "properties",
                        "patternProperties", "dependencies", "enum", "type", "format", "allOf", "anyOf", "oneOf",
                        "not", "$ref"}) {
    EXPECT_EQ(schema::likely_keyword(k, ojson()), "") << k;
  }
}

TEST(KeywordTypos, EverySchemaPositionIsCheckedAndNothingElse) {
  const Compiled c = compile(R"({
    "type": "object",
    "requried": ["name"],
    "properties": {
      "name": {"type": "string", "maxLenght": 3},
      "maxLenght": {"type": "integer"},
      "tags": {"type": "array", "items": {"minimun": 1}, "prefixItems": [{"propertes": {}}],
               "contains": {"maxLenght": 1}},
      "v": {"anyOf": [{"type": "null"}, {"type": "string", "minLenght": 1}],
            "not": {"maxItem": 2}, "if": {"requried": []}, "then": {"maxLenght": 1}, "else": {"maxLenght": 2}}
    },
    "patternProperties": {"^p": {"additonalProperties": false}},
    "additionalProperties": {"$ref": "#/components/thing"},
    "propertyNames": {"maxLenght": 9},
    "dependentSchemas": {"name": {"requried": ["v"]}},
    "$defs": {"minimun": {"minimun": 0}},
    "components": {"thing": {"type": "object", "minPropertes": 1}, "unused": {"maxLenght": 1}},
    "default": {"maxLenght": 1}, "examples": [{"requried": 1}],
    "dependencies": {"e": {"properties": {"e": {"enum": [{"propertes": 2}, 1]}, "c": {"const": {"minimun": 0}}}}},
    "x-maxLenght": 1
  })");
  const std::vector<std::string> expected = {
      "(root): unknown keyword 'requried': did you mean 'required'?",
      "/properties/name: unknown keyword 'maxLenght': did you mean 'maxLength'?",
      "/properties/tags/items: unknown keyword 'minimun': did you mean 'minimum'?",
      "/properties/tags/prefixItems/0: unknown keyword 'propertes': did you mean 'properties'?",
      "/properties/tags/contains: unknown keyword 'maxLenght': did you mean 'maxLength'?",
      "/properties/v/anyOf/1: unknown keyword 'minLenght': did you mean 'minLength'?",
      "/properties/v/not: unknown keyword 'maxItem': did you mean 'maxItems'?",
      "/properties/v/if: unknown keyword 'requried': did you mean 'required'?",
      "/properties/v/then: unknown keyword 'maxLenght': did you mean 'maxLength'?",
      "/properties/v/else: unknown keyword 'maxLenght': did you mean 'maxLength'?",
      "/patternProperties/^p: unknown keyword 'additonalProperties': did you mean 'additionalProperties'?",
      "/components/thing: unknown keyword 'minPropertes': did you mean 'minProperties'?",  // through $ref
      "/propertyNames: unknown keyword 'maxLenght': did you mean 'maxLength'?",
      "/dependentSchemas/name: unknown keyword 'requried': did you mean 'required'?",
      "/$defs/minimun: unknown keyword 'minimun': did you mean 'minimum'?",
  };
  std::vector<std::string> typos;
  for (const auto& w : c.schema.warnings) {
    if (w.find("unknown keyword") != std::string::npos) typos.push_back(w);
  }
  std::vector<std::string> want = expected;
  std::sort(typos.begin(), typos.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(typos, want) << warnings_of(c);
}

TEST(KeywordTypos, ATypoIsAWarningAndConstrainsNothing) {
  const Compiled c = compile(R"({"type":"string","maxLenght":3})");
  EXPECT_TRUE(c.warns("(root): unknown keyword 'maxLenght': did you mean 'maxLength'?")) << warnings_of(c);
  EXPECT_TRUE(c.accepts(R"("abcdef")"));  // an unknown keyword constrains nothing
}

}  // namespace
}  // namespace lockstep
