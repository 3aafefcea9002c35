// Reading JSON documents (schemas/json_document.h): simdjson's reader, with nlohmann's parser
// behind it for what simdjson refuses, gives exactly the document nlohmann's own parse gives —
// value types (an unsigned integer is not a signed one), doubles bit for bit, key order — on
// every schema and tool list of the shared data and on the corners where the two parsers
// part (negative zero, integers past 64 bits, deep nesting, repeated keys, surrogates).
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grammar/limits.h"
#include "schemas/json_document.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

using ojson = nlohmann::ordered_json;

// A value's type, numbers told apart as nlohmann stores them.
std::string type_of(const ojson& v) {
  if (v.is_number_unsigned()) return "unsigned integer";
  if (v.is_number_integer()) return "signed integer";
  if (v.is_number_float()) return "double";
  return v.type_name();
}

// Where `a` and `b` first differ (type, number bits, key, order, size), or "" when identical.
std::string difference(const ojson& a, const ojson& b, const std::string& at = "") {
  if (a.type() != b.type()) return at + ": " + type_of(a) + " / " + type_of(b);
  if (a.is_number_float()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::memcmp(&x, &y, sizeof x) == 0 ? "" : at + ": " + a.dump() + " / " + b.dump();
  }
  if (a.is_object() || a.is_array()) {
    if (a.size() != b.size()) return at + ": size";
    auto i = a.begin();
    auto j = b.begin();
    for (size_t k = 0; i != a.end(); ++i, ++j, ++k) {
      const std::string step = a.is_object() ? i.key() : std::to_string(k);
      if (a.is_object() && i.key() != j.key()) return at + ": key " + i.key() + " / " + j.key();
      if (std::string d = difference(*i, *j, at + "/" + step); !d.empty()) return d;
    }
    return "";
  }
  return a == b ? "" : at + ": " + a.dump() + " / " + b.dump();
}

// Both readers against nlohmann's parse of `text`: the same document, or all three refuse it.
void expect_as_nlohmann(const std::string& text, const std::string& label) {
  ojson expected;
  bool valid = true;
  try {
    expected = ojson::parse(text);
  } catch (const ojson::exception&) {
    valid = false;
  }
  if (!valid) {
    EXPECT_ANY_THROW(read_json(text)) << label;
    EXPECT_ANY_THROW(parse_json_document(text, "t.json")) << label;
    return;
  }
  EXPECT_EQ(difference(read_json(text), expected), "") << label;
  EXPECT_EQ(difference(parse_json_document(text, "t.json"), expected), "") << label;
}

TEST(JsonDocument, EverySharedSchemaAndToolListReadsAsNlohmannReadsIt) {
  size_t files = 0;
  for (const char* dir : {"schemas/jsonschemabench", "schemas/json-schema-test-suite", "toolcalls"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(test_data::shared(dir))) {
      if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
      expect_as_nlohmann(test_data::read_file(entry.path()), entry.path().string());
      ++files;
    }
  }
  EXPECT_GT(files, 8000u);
}

TEST(JsonDocument, CornersWhereTheParsersPartReadAsNlohmannReadsThem) {
  const std::vector<std::string> texts = {
      // Integers: unsigned without a sign, signed with one, -0 signed, past 64 bits a double.
      "0", "5", "-5", "-0", " -0", "[-0, 0, -0.0, -0e1]", "{\"a\": -0 }", "{\"a\":[1,\n-0]}", "[\"2-0\", 0]",
      "18446744073709551615", "18446744073709551616",
      "-9223372036854775808", "-9223372036854775809", "123456789012345678901234567890",
      // Doubles at their ends, and past them (an error).
      "1.5e308", "4.9e-324", "5e-325", "2.2250738585072011e-308", "0.1", "1E2", "1e+2", "1e400", "-1e400",
      // Strings: surrogate pairs whole, halves alone or reversed, raw control bytes, bad UTF-8.
      R"("\ud83d\ude00")", R"("\ud800")", R"("\udc00")", R"("\udc00\ud800")", R"("\ud800x")", R"("\u0000")",
      "\"a\x01\"", "\"\x7f\"", "\"\xff\"", "\"\xc0\x80\"", "\"\xed\xa0\x80\"", R"("\x")", R"("\/")",
      // Structure: a byte-order mark, trailing bytes and commas, repeated keys, empty input.
      "\xef\xbb\xbf{}", "{}x", "[1,]", "{\"a\":1,}", R"({"a": 1, "b": 2, "a": {"c": [3]}})", "", "nul", "01"};
  for (const std::string& text : texts) expect_as_nlohmann(text, text);
  // A repeated key among more members than a scan looks through.
  std::string wide = "{";
  for (int i = 0; i < 40; ++i) wide += "\"k" + std::to_string(i % 25) + "\": " + std::to_string(i) + ", ";
  expect_as_nlohmann(wide + "\"z\": [0]}", "40 members, 15 keys repeated");
}

TEST(JsonDocument, NestingPastSimdjsonsDepthIsReadByTheFallback) {
  EngineLimits limits = engine_limits();
  limits.nesting_depth = 3000;
  ScopedEngineLimits scoped(limits);
  for (const size_t depth : {size_t{1023}, size_t{1024}, size_t{1025}, size_t{2500}}) {
    const std::string text = std::string(depth, '[') + "{\"a\": -0}" + std::string(depth, ']');
    expect_as_nlohmann(text, std::to_string(depth) + " deep");
  }
  // The limit holds on either reader: a value inside 501 arrays under the default limit.
  limits.nesting_depth = 500;
  ScopedEngineLimits default_limit(limits);
  EXPECT_NO_THROW(parse_json_document(std::string(500, '[') + "1" + std::string(500, ']'), "t.json"));
  EXPECT_THROW(parse_json_document(std::string(501, '[') + "1" + std::string(501, ']'), "t.json"), LimitError);
}

}  // namespace
}  // namespace lockstep
