// fuzz/llama2c_fuzz.cpp — bytes as a llama2.c file, read both ways: as a tokenizer.bin
// (load_llama2c_tokenizer: encode, decode, one mask) and as a checkpoint
// (load_llama2c_model: one forward pass on a tiny context).
#include "fuzz/fuzz_common.h"
#include "runtime/model.h"
#include "runtime/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = lockstep::fuzz::write_scratch_file("model.bin", data, size);
  lockstep::fuzz::expect_input_errors([&] {
    const auto tok = lockstep::load_llama2c_tokenizer(path);
    const auto ids = tok->encode("Once upon a time, \xc3\xa9t\xc3\xa9 42\n", true);
    (void)tok->decode(ids);
    lockstep::fuzz::tokenizer_mask(tok->shared_vocabulary());
  });
  lockstep::fuzz::expect_input_errors([&] {
    const auto model = lockstep::load_llama2c_model(path);
    if (model->config().vocab_size <= 0 || model->config().seq_len <= 0) return;
    lockstep::InferenceState state(model, 2);
    (void)state.forward(0, 0);
  });
  return 0;
}
