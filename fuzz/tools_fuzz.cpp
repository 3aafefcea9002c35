// fuzz/tools_fuzz.cpp — bytes → JSON → tool definitions (OpenAI, MCP or BFCL forms) → the
// grammar of a call → compiled grammar → a few token steps. Inputs that are not JSON are
// skipped; an odd length asks for parallel calls.
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_common.h"
#include "schemas/tool_calls.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto document = nlohmann::ordered_json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return 0;
  lockstep::fuzz::expect_input_errors([&] {
    const auto tools = lockstep::parse_tool_definitions(document);
    lockstep::JsonSchemaOptions options;
    options.whitespace = lockstep::JsonSchemaOptions::Whitespace::kCompact;
    options.forbid_additional_properties = (size & 2) != 0;
    lockstep::fuzz::compile_and_mask(lockstep::compile_tool_calls(tools, options, (size & 1) != 0).grammar);
  });
  return 0;
}
