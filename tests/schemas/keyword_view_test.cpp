// KeywordView (schemas/keyword_view.h) against nlohmann's own lookups: for objects with many
// keys, keys that share a signature bit, the empty key and non-ASCII keys, contains() and
// operator[] agree with json::contains and json::at for every keyword and every key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "schemas/keyword_view.h"

namespace lockstep::schema {
namespace {

TEST(KeywordView, AgreesWithTheObjectsOwnLookups) {
  // The keywords the compiler asks for, and keys near them.
  std::vector<std::string> probes = {
      "$ref", "$id", "$anchor", "$dynamicAnchor", "$dynamicRef", "$recursiveRef", "$defs", "type", "enum", "const",
      "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength",
      "pattern", "format", "items", "prefixItems", "additionalItems", "minItems", "maxItems", "contains",
      "minContains", "maxContains", "uniqueItems", "unevaluatedItems", "properties", "patternProperties",
      "additionalProperties", "required", "propertyNames", "minProperties", "maxProperties",
      "unevaluatedProperties", "dependentRequired", "dependentSchemas", "dependencies", "allOf", "anyOf",
      "oneOf", "not", "if", "then", "else", "nullable", "definitions", "default", "examples"};
  for (const char* k : {"", "a", "ab", "ba", "aXb", "aYb", "type ", "typ", "types", "\xc3\xa9t\xc3\xa9", "$id", "id"}) {
    probes.emplace_back(k);
  }
  std::vector<json> objects = {json::object()};
  // Each known keyword alone, then growing objects of keywords and other keys.
  json growing = json::object();
  for (size_t i = 0; i < probes.size(); ++i) {
    objects.push_back(json{{probes[i], i}});
    if (i % 3 == 0) growing[probes[i]] = i;
    if (i % 7 == 0) objects.push_back(growing);
  }
  for (const json& object : objects) {
    const KeywordView view(object);
    for (const std::string& key : probes) {
      ASSERT_EQ(view.contains(key), object.contains(key)) << key << " in " << object.dump();
      if (object.contains(key)) {
        EXPECT_EQ(&view[key], &object.at(key)) << key;
      } else {
        EXPECT_THROW((void)view[key], std::out_of_range) << key;
      }
    }
  }
}

}  // namespace
}  // namespace lockstep::schema
