// runtime/unicode.cpp — see unicode.h.
#include "runtime/unicode.h"

#include <cstdlib>
#include <memory>

#include <utf8proc.h>

#include "grammar/utf8.h"

namespace lockstep::unicode {

std::string nfc(std::string_view text) {
  if (!utf8::is_valid(text)) return std::string(text);
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &out,
                                          static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) return std::string(text);
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> holder(out, &std::free);
  return std::string(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
}

bool is_whitespace(uint32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

const std::string& whitespace_class_body() {
  static const std::string body =
      "\\t\\n\\x0B\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
      "\\x{205F}\\x{3000}";
  return body;
}

}  // namespace lockstep::unicode
