// fuzz/gguf_fuzz.cpp — bytes as a GGUF file → GgufFile (header, metadata, tensor infos),
// every metadata getter, load_gguf_tokenizer (encode, decode, one mask) and
// load_gguf_model (one forward pass on a tiny context).
#include "fuzz/fuzz_common.h"
#include "runtime/gguf.h"
#include "runtime/model.h"
#include "runtime/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = lockstep::fuzz::write_scratch_file("model.gguf", data, size);
  std::shared_ptr<const lockstep::GgufFile> file;
  lockstep::fuzz::expect_input_errors([&] { file = std::make_shared<const lockstep::GgufFile>(path); });
  if (!file) return 0;
  for (const auto& [key, value] : file->metadata()) {
    lockstep::fuzz::expect_input_errors([&, &key = key] {
      (void)file->get_string_opt(key);
      (void)file->get_int_opt(key);
      (void)file->get_float_opt(key);
      (void)file->get_bool_opt(key);
    });
  }
  lockstep::fuzz::expect_input_errors([&] {
    const auto tok = lockstep::load_gguf_tokenizer(*file);
    const auto ids = tok->encode("Hello world! 123 \xc3\xa9t\xc3\xa9\n", true);
    (void)tok->decode(ids);
    lockstep::fuzz::tokenizer_mask(tok->shared_vocabulary());
  });
  lockstep::fuzz::expect_input_errors([&] {
    const auto model = lockstep::load_gguf_model(file);
    if (model->config().vocab_size <= 0 || model->config().seq_len <= 0) return;
    lockstep::InferenceState state(model, 2);
    (void)state.forward(0, 0);
  });
  return 0;
}
