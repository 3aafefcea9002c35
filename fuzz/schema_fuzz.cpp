// fuzz/schema_fuzz.cpp — bytes → JSON → compile_json_schema → compiled grammar → a few
// token steps. Inputs that are not JSON are skipped. The input's length picks the
// whitespace and property-order options and leniency. First, the API's reader of schema
// text (simdjson, nlohmann's parser behind it) must give the document nlohmann's parse gives,
// and refuse what it refuses.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz/fuzz_common.h"
#include "schemas/json_document.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto schema = nlohmann::ordered_json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  bool read = true;
  nlohmann::ordered_json doc;
  try {
    doc = lockstep::read_json(text);
  } catch (const std::exception&) {
    read = false;
  }
  if (read != !schema.is_discarded() || (read && (doc != schema || doc.dump() != schema.dump()))) {
    std::fprintf(stderr, "read_json and nlohmann's parse disagree (%s)\n", read ? "read" : "refused");
    std::abort();
  }
  if (schema.is_discarded()) return 0;
  lockstep::JsonSchemaOptions options;
  using Options = lockstep::JsonSchemaOptions;
  options.whitespace = size % 3 == 0 ? Options::Whitespace::kCompact
                       : size % 3 == 1 ? Options::Whitespace::kFlexible
                                       : Options::Whitespace::kPretty;
  options.max_whitespace = 4;
  options.property_order = (size & 4) ? Options::PropertyOrder::kAny : Options::PropertyOrder::kSchema;
  options.lenient = (size & 8) != 0;
  options.canonical_numbers = (size & 16) != 0;
  lockstep::fuzz::expect_input_errors(
      [&] { lockstep::fuzz::compile_and_mask(lockstep::compile_json_schema(schema, options).grammar); });
  return 0;
}
