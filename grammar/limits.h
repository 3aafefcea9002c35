// grammar/limits.h — EngineLimits (public: include/lockstep/limits.h) and the compile-time
// deadline the compilers check.
#pragma once

#include <chrono>
#include <cstdint>

#include "lockstep/limits.h"

namespace lockstep {

/// A compilation's wall-time budget (EngineLimits::compile_ms, read at construction).
/// check() is cheap (a clock read every 256 calls) and throws LimitError once past it.
class CompileDeadline {
 public:
  CompileDeadline();
  void check(const ErrorLocation& where = {}) {
    if (limit_ms_ != 0 && (++calls_ & 255) == 0) check_now(where);
  }
  void check_now(const ErrorLocation& where = {});

 private:
  uint64_t limit_ms_;
  uint32_t calls_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace lockstep
