// fuzz/regex_fuzz.cpp — bytes → regular expression parser → compiled grammar → a few
// token steps. The input's length picks the options (full match or search, RE2 or
// ECMA-262 meanings), so each form is reached from every pattern shape.
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view pattern(reinterpret_cast<const char*>(data), size);
  lockstep::RegexOptions options;
  options.search = (size & 1) != 0;
  options.ecma = (size & 2) != 0;
  lockstep::fuzz::expect_input_errors(
      [&] { lockstep::fuzz::compile_and_mask(lockstep::parse_regex(pattern, options)); });
  return 0;
}
