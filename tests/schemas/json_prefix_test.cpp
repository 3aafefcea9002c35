// scan_json_prefix: at every prefix of real JSON documents (the JSON-Schema-Test-Suite's,
// spelled compact, indented and ASCII-escaped by nlohmann), the pointer it names resolves
// in nlohmann's parse of the whole document to the value being read there.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "schemas/json_prefix.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

using ojson = nlohmann::ordered_json;
using Place = JsonPrefixPosition::Place;

// Every prefix of `text` (the spelling of `doc`) against the parsed document.
void check_prefixes(const ojson& doc, const std::string& text, bool ascii) {
  for (size_t k = 0; k <= text.size(); ++k) {
    const JsonPrefixPosition pos = scan_json_prefix(std::string_view(text).substr(0, k));
    const std::string where = "prefix " + std::to_string(k) + " of " + text.substr(0, 200);
    ASSERT_TRUE(pos.valid) << where;
    const ojson::json_pointer ptr(pos.pointer);
    switch (pos.place) {
      case Place::kInValue: {
        ASSERT_TRUE(doc.contains(ptr)) << where << " → " << pos.pointer;
        const ojson& v = doc.at(ptr);
        ASSERT_TRUE(v.is_primitive()) << where;
        const std::string spelled = v.dump(-1, ' ', ascii);
        EXPECT_EQ(text.compare(pos.token_start, spelled.size(), spelled), 0) << where;
        EXPECT_LT(pos.token_start, k) << where;
        EXPECT_LE(k, pos.token_start + spelled.size()) << where;
        EXPECT_EQ(pos.in_string, v.is_string()) << where;
        break;
      }
      case Place::kInKey: {
        ASSERT_TRUE(doc.contains(ptr)) << where;
        const ojson& o = doc.at(ptr);
        ASSERT_TRUE(o.is_object()) << where;
        bool found = false;
        for (const auto& [key, value] : o.items()) {
          const std::string spelled = ojson(key).dump(-1, ' ', ascii);
          if (text.compare(pos.token_start, spelled.size(), spelled) != 0) continue;
          found = true;
          EXPECT_EQ(key.compare(0, pos.key.size(), pos.key), 0) << where << ": " << pos.key << " of " << key;
        }
        EXPECT_TRUE(found) << where;
        break;
      }
      case Place::kAfterKey:
        ASSERT_TRUE(doc.contains(ptr)) << where;
        EXPECT_EQ(ptr.back(), pos.key) << where;
        break;
      case Place::kBeforeValue:
        // An item index one past the end only in an empty array ("[" before "]").
        if (!doc.contains(ptr)) {
          ASSERT_FALSE(ptr.empty()) << where;
          const ojson& parent = doc.at(ptr.parent_pointer());
          EXPECT_TRUE(parent.is_array() && parent.empty()) << where << " → " << pos.pointer;
        }
        break;
      case Place::kBeforeKey:
        ASSERT_TRUE(doc.contains(ptr)) << where;
        EXPECT_TRUE(doc.at(ptr).is_object()) << where;
        break;
      case Place::kAfterValue:
        ASSERT_TRUE(doc.contains(ptr)) << where;
        EXPECT_TRUE(doc.at(ptr).is_structured() || pos.pointer.empty()) << where;
        break;
    }
  }
}

TEST(JsonPrefix, PointersResolveInTheParsedDocumentAtEveryPrefix) {
  size_t documents = 0;
  for (const auto& path : test_data::files_with_suffix(test_data::shared("schemas/json-schema-test-suite/tests/draft2020-12"), ".json")) {
    const auto groups = ojson::parse(test_data::read_file(path));
    for (const auto& group : groups) {
      std::vector<const ojson*> docs{&group.at("schema")};
      for (const auto& t : group.at("tests")) docs.push_back(&t.at("data"));
      for (const ojson* doc : docs) {
        for (int indent : {-1, 2}) {
          for (bool ascii : {false, true}) {
            const std::string text = doc->dump(indent, ' ', ascii);
            if (text.size() > 600) continue;
            SCOPED_TRACE(path.filename().string());
            check_prefixes(*doc, text, ascii);
            ++documents;
          }
        }
      }
    }
  }
  EXPECT_GT(documents, 3000u);
}

TEST(JsonPrefix, PlacesPointersAndNames) {
  auto at = [](std::string_view s) { return scan_json_prefix(s); };
  EXPECT_EQ(at("").place, Place::kBeforeValue);
  EXPECT_EQ(at("").pointer, "");
  EXPECT_EQ(at("  12").place, Place::kInValue);
  EXPECT_EQ(at("  12").token_start, 2u);
  EXPECT_EQ(at("12 ").place, Place::kAfterValue);
  auto p = at(R"({"a": [1, {"b)");
  EXPECT_EQ(p.place, Place::kInKey);
  EXPECT_EQ(p.pointer, "/a/1");
  EXPECT_EQ(p.key, "b");
  EXPECT_EQ(p.token_start, 11u);
  EXPECT_EQ(at(R"({"a/b": {"~": 1)").pointer, "/a~1b/~0");
  p = at(R"({"a": "x\")");
  EXPECT_EQ(p.place, Place::kInValue);
  EXPECT_TRUE(p.in_string);
  EXPECT_EQ(p.pointer, "/a");
  EXPECT_EQ(at(R"({"k\u00e9)").key, "k\xc3\xa9");
  EXPECT_EQ(at(R"({"k\u00)").key, "k");
  EXPECT_EQ(at(R"({"k\)").key, "k");
  EXPECT_EQ(at(R"({"k\\)").key, "k\\");
  EXPECT_EQ(at(R"({"\ud83d\ude00)").key, "\xf0\x9f\x98\x80");
  EXPECT_EQ(at(R"({"x\ud83d)").key, "x");
  EXPECT_EQ(at("{\"x\xc3").key, "x");
  EXPECT_EQ(at(R"({"a" )").place, Place::kAfterKey);
  EXPECT_EQ(at(R"({"a" )").pointer, "/a");
  EXPECT_EQ(at(R"({"a": )").place, Place::kBeforeValue);
  EXPECT_EQ(at(R"({"a": 1, )").place, Place::kBeforeKey);
  EXPECT_EQ(at(R"({"a": 1, )").pointer, "");
  EXPECT_EQ(at("[1, 2, ").pointer, "/2");
  EXPECT_EQ(at("[1, 2").pointer, "/1");
  EXPECT_EQ(at("[1, 2").place, Place::kInValue);
  EXPECT_EQ(at("[1, [true, [], 2").pointer, "/1/2");
  EXPECT_EQ(at("[1, 2 ").place, Place::kAfterValue);
  EXPECT_EQ(at("[1, 2 ").pointer, "");
  EXPECT_EQ(at(R"({"a": {"b": []")").pointer, "/a");
  EXPECT_EQ(at(R"({"a": {"b": []})").pointer, "");  // /a is complete: the root object is read
  p = at(R"({"a": 1}})");
  EXPECT_FALSE(p.valid);
  EXPECT_EQ(p.invalid_at, 8u);
  EXPECT_FALSE(at("[}").valid);
  EXPECT_FALSE(at("{1").valid);
  EXPECT_EQ(json_pointer_token("a/~b"), "a~1~0b");
}

}  // namespace
}  // namespace lockstep
