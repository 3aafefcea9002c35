// fuzz/gbnf_fuzz.cpp — bytes → GBNF parser; a grammar that parses is compiled and takes a
// few token steps on the fuzzing vocabulary (fuzz_common.h).
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  lockstep::fuzz::expect_input_errors([&] { lockstep::fuzz::compile_and_mask(lockstep::parse_gbnf(text)); });
  return 0;
}
