// automata/next_bytes.cpp — see next_bytes.h.
#include "automata/next_bytes.h"

#include <fmt/format.h>

namespace lockstep {

namespace {

using ByteSet = GrammarAutomaton::ByteSet;

bool has(const ByteSet& s, unsigned b) { return (s[b >> 6] >> (b & 63)) & 1; }
void drop(ByteSet& s, unsigned b) { s[b >> 6] &= ~(uint64_t{1} << (b & 63)); }

bool has_all(const ByteSet& s, unsigned lo, unsigned hi) {
  for (unsigned b = lo; b <= hi; ++b) {
    if (!has(s, b)) return false;
  }
  return true;
}
void drop_all(ByteSet& s, unsigned lo, unsigned hi) {
  for (unsigned b = lo; b <= hi; ++b) drop(s, b);
}

std::string escaped(uint8_t b, char quote) {
  switch (b) {
    case '\n': return "\\n";
    case '\t': return "\\t";
    case '\r': return "\\r";
    case '\\': return "\\\\";
    default: break;
  }
  if (b == static_cast<uint8_t>(quote)) return std::string("\\") + quote;
  if (b < 0x20 || b >= 0x7f) return fmt::format("\\x{:02x}", b);
  return std::string(1, static_cast<char>(b));
}

}  // namespace

ByteSet next_bytes(const EarleyParser& parser) {
  ByteSet out{};
  const GrammarAutomaton& g = parser.grammar();
  for (const auto& it : parser.current_items()) {
    for (const auto& e : g.byte_edges(it.state)) {
      GrammarAutomaton::add_byte_range(out, e.lo, e.hi);
    }
  }
  return out;
}

std::string quote_byte(uint8_t byte) { return "'" + escaped(byte, '\'') + "'"; }

std::string quote_bytes(std::string_view bytes) {
  std::string out = "'";
  for (char c : bytes) out += escaped(static_cast<uint8_t>(c), '\'');
  return out + "'";
}

std::vector<std::string> describe_bytes(const ByteSet& bytes) {
  ByteSet rest = bytes;
  std::vector<std::string> parts;
  // Classes first. UTF-8 lead bytes C2–F4 stand for "a non-ASCII character".
  const bool printable = has_all(rest, 0x20, 0x7e), non_ascii = has_all(rest, 0xc2, 0xf4);
  if (printable && non_ascii) {
    parts.push_back("any character");
  } else if (printable) {
    parts.push_back("any ASCII character");
  } else if (non_ascii) {
    parts.push_back("a non-ASCII character");
  }
  if (printable) drop_all(rest, 0x20, 0x7e);
  if (non_ascii) drop_all(rest, 0x80, 0xff);
  if (has_all(rest, '0', '9')) {
    parts.push_back("a digit");
    drop_all(rest, '0', '9');
  } else if (has_all(rest, '1', '9')) {
    parts.push_back("a digit from 1 to 9");
    drop_all(rest, '1', '9');
  }
  if (has_all(rest, 'a', 'z') && has_all(rest, 'A', 'Z')) {
    parts.push_back("a letter");
    drop_all(rest, 'a', 'z');
    drop_all(rest, 'A', 'Z');
  } else if (has_all(rest, 'a', 'z')) {
    parts.push_back("a lowercase letter");
    drop_all(rest, 'a', 'z');
  } else if (has_all(rest, 'A', 'Z')) {
    parts.push_back("an uppercase letter");
    drop_all(rest, 'A', 'Z');
  }
  const bool whitespace = has(rest, ' ') && has(rest, '\t') && has(rest, '\n') && has(rest, '\r');
  if (whitespace) {
    for (unsigned b : {' ', '\t', '\n', '\r'}) drop(rest, b);
  }
  // Then single bytes and runs of three or more as ranges, in byte order.
  std::vector<std::string> singles;
  for (unsigned b = 0; b < 256;) {
    if (!has(rest, b)) {
      ++b;
      continue;
    }
    unsigned e = b;
    while (e + 1 < 256 && has(rest, e + 1)) ++e;
    if (e - b >= 2) {
      singles.push_back(quote_byte(static_cast<uint8_t>(b)) + "-" + quote_byte(static_cast<uint8_t>(e)));
    } else {
      for (unsigned x = b; x <= e; ++x) singles.push_back(quote_byte(static_cast<uint8_t>(x)));
    }
    b = e + 1;
  }
  constexpr size_t kShown = 8;
  if (singles.size() > kShown + 1) {
    const size_t more = singles.size() - kShown;
    singles.resize(kShown);
    singles.push_back(fmt::format("{} other bytes or ranges", more));
  }
  parts.insert(parts.end(), singles.begin(), singles.end());
  if (whitespace) parts.push_back("whitespace");
  return parts;
}

std::string join_alternatives(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " or " : ", ";
    out += parts[i];
  }
  return out;
}

}  // namespace lockstep
