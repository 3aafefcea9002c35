// automata/json_escapes.cpp — see json_escapes.h.
#include "automata/json_escapes.h"

#include <algorithm>
#include <functional>

namespace lockstep {

std::vector<HexDigits> hex_sequences(uint32_t lo, uint32_t hi) {
  std::vector<HexDigits> out;
  std::function<void(uint32_t, uint32_t)> split = [&](uint32_t a, uint32_t b) {
    if (a > b) return;
    for (int i = 1; i < 4; ++i) {
      const uint32_t m = (1u << (4 * i)) - 1;
      if ((a & ~m) != (b & ~m)) {
        if ((a & m) != 0) {
          split(a, a | m);
          split((a | m) + 1, b);
          return;
        }
        if ((b & m) != m) {
          split(a, (b & ~m) - 1);
          split(b & ~m, b);
          return;
        }
      }
    }
    HexDigits d;
    for (int pos = 0; pos < 4; ++pos) {
      const int shift = 4 * (3 - pos);
      d[pos] = {(a >> shift) & 15, (b >> shift) & 15};
    }
    out.push_back(d);
  };
  split(lo, hi);
  return out;
}

std::vector<ByteRange> hex_digit_bytes(uint32_t d0, uint32_t d1) {
  std::vector<ByteRange> out;
  if (d0 <= 9) out.push_back({static_cast<uint8_t>('0' + d0), static_cast<uint8_t>('0' + std::min(d1, 9u))});
  if (d1 >= 10) {
    const uint32_t a = std::max(d0, 10u) - 10, b = d1 - 10;
    out.push_back({static_cast<uint8_t>('A' + a), static_cast<uint8_t>('A' + b)});
    out.push_back({static_cast<uint8_t>('a' + a), static_cast<uint8_t>('a' + b)});
  }
  return out;
}

}  // namespace lockstep
