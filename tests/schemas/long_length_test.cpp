// String length bounds of any size: a bound alone is kept as its bounds (no chain of a
// state per code point) and written as blocks, so bounds past 100,000 code points compile
// and are exact on both sides; beside a pattern or a format they are still refused.
#include <gtest/gtest.h>

#include <string>

#include "tests/schemas/compiled_schema.h"

namespace lockstep {
namespace {

using schema_test::compile_schema;
using schema_test::schema_error_of;

// A JSON string of `n` code points: ASCII, then three written as an escape, UTF-8 and an
// escaped surrogate pair (which still count one each).
std::string text_of(size_t n) {
  std::string t = "\"";
  if (n >= 3) {
    t += std::string(n - 3, 'a');
    t += "\\u00e9\xc3\xa9\\ud83d\\ude00";
  } else {
    t += std::string(n, 'a');
  }
  return t + "\"";
}

TEST(LongLengths, BoundsPastOneHundredThousandAreExact) {
  struct Case {
    const char* schema;
    std::vector<size_t> valid, invalid;
  };
  const Case cases[] = {
      {R"({"type": "string", "maxLength": 150000})", {0, 3, 512, 513, 149999, 150000}, {150001, 150002}},
      {R"({"type": "string", "minLength": 120000})", {120000, 120001, 121000}, {0, 513, 119999}},
      {R"({"allOf": [{"type": "string", "maxLength": 1000000}, {"minLength": 200000}]})", {200000, 200513},
       {199999, 3}},
      {R"({"type": "string", "not": {"maxLength": 60000}})", {60001, 60600}, {0, 60000}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.schema);
    const auto c = compile_schema(k.schema);
    for (size_t n : k.valid) EXPECT_TRUE(c.accepts(text_of(n))) << n;
    for (size_t n : k.invalid) EXPECT_FALSE(c.accepts(text_of(n))) << n;
  }
  // The grammar grows with the blocks of a bound (one state per 512 code points), not
  // with its code points.
  const auto million = compile_schema(R"({"type": "string", "maxLength": 1000000})");
  EXPECT_LT(million.grammar->num_states(), 20000u);
  EXPECT_TRUE(million.accepts(text_of(999999)));
  EXPECT_FALSE(million.accepts(text_of(1000001)));
}

// A bound beside other strings: united with a pattern's strings, or under `not`, the chain
// is built (within the state limit here, as before); beside a pattern or a format in one schema, a bound past
// 100,000 is refused, as before, since the product has a layer per code point.
TEST(LongLengths, BoundsBesideOtherLanguages) {
  const auto either = compile_schema(R"({"anyOf": [{"type": "string", "maxLength": 50000},
                                                    {"type": "string", "pattern": "^z+$"}]})");
  EXPECT_TRUE(either.accepts("\"" + std::string(60000, 'z') + "\""));
  EXPECT_TRUE(either.accepts(text_of(50000)));
  EXPECT_FALSE(either.accepts(text_of(60000)));
  EXPECT_NE(schema_error_of(R"({"type": "string", "pattern": "^a+$", "maxLength": 150000})")
                .find("lengths above 100000 code points beside a pattern or format"),
            std::string::npos);
  EXPECT_NE(schema_error_of(R"({"type": "string", "format": "email", "minLength": 150000})")
                .find("lengths above 100000 code points beside a pattern or format"),
            std::string::npos);
  // A bound alone up to ten million code points (its grammar grows by a state per block);
  // past it, refused as a keyword that is not enforced (--lenient drops it).
  EXPECT_EQ(schema_error_of(R"({"type": "string", "maxLength": 10000000})"), "");
  for (const char* big :
       {R"({"type": "string", "maxLength": 2147483647})", R"({"type": "string", "minLength": 10000001})"}) {
    EXPECT_NE(schema_error_of(big).find("lengths above 10000000 code points"), std::string::npos) << big;
  }
  // A format that is not asserted does not stand beside the bound.
  JsonSchemaOptions annotations;
  annotations.assert_formats = false;
  EXPECT_EQ(schema_error_of(R"({"type": "string", "format": "email", "maxLength": 150000})", annotations), "");
}

}  // namespace
}  // namespace lockstep
