// fuzz/tokenizer_json_fuzz.cpp — bytes as a Hugging Face tokenizer.json → load_hf_tokenizer;
// a tokenizer that loads encodes and decodes a short text, and its vocabulary serves one
// mask of a JSON grammar.
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_common.h"
#include "runtime/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = lockstep::fuzz::write_scratch_file("tokenizer.json", data, size);
  lockstep::fuzz::expect_input_errors([&] {
    const auto tok = lockstep::load_hf_tokenizer(path);
    const auto ids = tok->encode("Hello world! 123 \xc3\xa9t\xc3\xa9 {\"a\": [1, 2]}\n", true);
    (void)tok->decode(ids);
    for (const int32_t id : ids) (void)tok->token_name(id);
    lockstep::fuzz::tokenizer_mask(tok->shared_vocabulary());
  });
  return 0;
}
