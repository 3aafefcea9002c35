// runtime/cli/rejection.cpp — see rejection.h.
#include "runtime/cli/rejection.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "automata/next_bytes.h"
#include "schemas/json_prefix.h"

namespace lockstep::cli {

namespace {

using ByteSet = GrammarAutomaton::ByteSet;
using Place = JsonPrefixPosition::Place;

bool has(const ByteSet& s, unsigned b) { return (s[b >> 6] >> (b & 63)) & 1; }
void drop(ByteSet& s, unsigned b) { s[b >> 6] &= ~(uint64_t{1} << (b & 63)); }
size_t count(const ByteSet& s) {
  size_t n = 0;
  for (uint64_t w : s) n += static_cast<size_t>(__builtin_popcountll(w));
  return n;
}
bool empty(const ByteSet& s) { return count(s) == 0; }

// " (line L, column C)" when the text has several lines; columns count characters.
std::string line_column(std::string_view text, size_t at) {
  if (text.find('\n') == std::string_view::npos) return "";
  size_t line = 1, column = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<uint8_t>(text[i]) & 0xc0) != 0x80) {
      ++column;
    }
  }
  return fmt::format(" (line {}, column {})", line, column);
}

// Control bytes of a pointer or name, escaped for a one-line message.
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto b = static_cast<uint8_t>(c);
    out += b < 0x20 || b == 0x7f ? fmt::format("\\x{:02x}", b) : std::string(1, c);
  }
  return out;
}

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Depth-first enumeration of the JSON literal tokens (strings, true, false, null) the
// grammar allows from the parser's state, when they are few and spelled out byte by byte.
// Escapes are not followed: strings are listed as spelled without them.
class LiteralEnumerator {
 public:
  static constexpr size_t kMaxLiterals = 8, kMaxLength = 64, kMaxBranching = 8;

  explicit LiteralEnumerator(EarleyParser& p) : p_(p) {}

  // The literals starting with one of `first` ('"', 't', 'f', 'n'), sorted; empty when
  // they are too many, too long, or free text. The parser is left as it was.
  std::vector<std::string> run(const ByteSet& first) {
    const size_t start = p_.num_bytes();
    try {
      for (unsigned b = 0; b < 256; ++b) {
        if (!has(first, b)) continue;
        step(static_cast<uint8_t>(b));
        if (!ok_) break;
      }
    } catch (const ParserLimitError&) {
      ok_ = false;
    }
    p_.rollback(p_.num_bytes() - start);
    token_.clear();
    if (!ok_) out_.clear();
    return out_;
  }

 private:
  // Reads `b` after token_ and what may follow, up to the token's end. Sets ok_ = false to
  // give up.
  void step(uint8_t b) {
    if (budget_ == 0) {
      ok_ = false;
      return;
    }
    --budget_;
    if (!p_.advance(b)) return;
    token_.push_back(static_cast<char>(b));
    const bool string = token_[0] == '"';
    const bool done = string ? token_.size() > 1 && b == '"'
                             : token_ == "true" || token_ == "false" || token_ == "null";
    if (done) {
      out_.push_back(token_);
      ok_ = out_.size() <= kMaxLiterals;
    } else if (token_.size() >= kMaxLength) {
      ok_ = false;
    } else {
      const ByteSet next = next_bytes(p_);
      if (string && count(next) > kMaxBranching) ok_ = false;
      for (unsigned c = 0; c < 256 && ok_; ++c) {
        if (!has(next, c) || c == '\\' || (!string && (c < 'a' || c > 'z'))) continue;
        step(static_cast<uint8_t>(c));
      }
    }
    token_.pop_back();
    p_.rollback(1);
  }

  EarleyParser& p_;
  std::string token_;
  std::vector<std::string> out_;
  size_t budget_ = 20000;
  bool ok_ = true;
};

ByteSet literal_starts(const ByteSet& next) {
  ByteSet first{};
  for (unsigned b : {'"', 't', 'f', 'n'}) {
    if (has(next, b)) first[b >> 6] |= uint64_t{1} << (b & 63);
  }
  return first;
}

// The bytes worth naming: in JSON, whitespace between tokens and escapes inside strings
// are left unsaid unless nothing else could come.
ByteSet shown_bytes(const EarleyParser& p, bool json, bool in_string) {
  ByteSet next = next_bytes(p);
  if (!json) return next;
  ByteSet plain = next;
  if (in_string) {
    drop(plain, '\\');
  } else {
    for (unsigned b : {' ', '\t', '\n', '\r'}) drop(plain, b);
  }
  return !empty(plain) || p.accepting() ? plain : next;
}

// The text the grammar forces from here (as shown_bytes counts choices); in JSON, up to the
// end of the current token. The parser is left as it was.
std::string forced_text(EarleyParser& p, const JsonPrefixPosition* json, size_t max_bytes) {
  bool in_string = json != nullptr && json->in_string, escaped = false;
  std::string out;
  while (out.size() < max_bytes && !p.accepting()) {
    const ByteSet next = shown_bytes(p, json != nullptr, in_string);
    if (count(next) != 1) break;
    uint8_t b = 0;
    while (!has(next, b)) ++b;
    if (!p.advance(b)) break;
    out.push_back(static_cast<char>(b));
    if (json == nullptr) continue;
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (b == '\\') {
        escaped = true;
      } else if (b == '"') {
        break;
      }
    } else if (b == '"') {
      in_string = true;
    } else if (b == '{' || b == '}' || b == '[' || b == ']' || b == ',' || b == ':') {
      break;
    }
  }
  p.rollback(out.size());
  return out;
}

std::string comma_list(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i > 0 ? ", " : "") + parts[i];
  return out;
}

// "A", "A or B", "A, B or C" — or "one of A, B, C" when all are JSON literals.
std::string alternatives(const std::vector<std::string>& parts, size_t literals) {
  if (literals < 2 || literals != parts.size()) return join_alternatives(parts);
  return "one of " + comma_list(parts);
}

// "expected …" at the parser's state.
std::string expected_here(EarleyParser& p, const JsonPrefixPosition* json) {
  ByteSet next = shown_bytes(p, json != nullptr, json != nullptr && json->in_string);
  const bool can_end = p.accepting();
  std::vector<std::string> parts;
  if (json != nullptr && (json->place == Place::kBeforeValue || json->place == Place::kBeforeKey)) {
    const ByteSet first = literal_starts(next);
    if (!empty(first)) parts = LiteralEnumerator(p).run(first);
    if (!parts.empty()) {
      for (unsigned b = 0; b < 256; ++b) {
        if (has(first, b)) drop(next, b);
      }
    }
  }
  const size_t literals = parts.size();
  if (literals == 0 && count(next) == 1 && !can_end) {
    constexpr size_t kShown = 40;
    std::string forced = forced_text(p, json, kShown + 1);
    const bool cut = forced.size() > kShown;
    if (cut) forced.resize(kShown);
    return "expected " + quote_bytes(forced) + (cut ? "…" : "");
  }
  const auto bytes = describe_bytes(next);
  parts.insert(parts.end(), bytes.begin(), bytes.end());
  if (can_end) parts.push_back("the end of the input");
  if (parts.empty()) return "nothing can follow";
  return "expected " + alternatives(parts, literals);
}

// "; allowed here: …" for a string or literal being read: the tokens the grammar allows
// from its first byte, when they are few.
std::string literals_of_token(EarleyParser& p, std::string_view text, size_t stop, const JsonPrefixPosition& pos) {
  const size_t start = pos.token_start;
  p.rollback(stop - start);
  ByteSet first{};
  const auto b0 = static_cast<unsigned>(static_cast<uint8_t>(text[start]));
  first[b0 >> 6] |= uint64_t{1} << (b0 & 63);
  const auto literals = has(literal_starts(first), b0) ? LiteralEnumerator(p).run(first) : std::vector<std::string>{};
  if (!p.advance(text.substr(start, stop - start))) throw std::logic_error("check: cannot re-read the token");
  if (literals.size() < 2) return "";
  return "; allowed here: " + comma_list(literals);
}

std::string pointer_text(const std::string& pointer) {
  return pointer.empty() ? "\"\" (the root)" : printable(pointer);
}

}  // namespace

std::string rejection_message(EarleyParser& parser, std::string_view text, size_t stop, bool json) {
  std::string out = stop < text.size()
                        ? fmt::format("rejected at byte {}{}", stop, line_column(text, stop))
                        : fmt::format("rejected: the input is incomplete: it ends at byte {}{}", stop,
                                      line_column(text, stop));
  if (!json) return out + ": " + expected_here(parser, nullptr);
  const JsonPrefixPosition pos = scan_json_prefix(text.substr(0, stop));
  out += ", in " + pointer_text(pos.pointer);
  if (pos.place == Place::kInKey) out += ", in the key " + printable(json_string(pos.key));
  out += ": " + expected_here(parser, &pos);
  if (pos.place == Place::kInValue || pos.place == Place::kInKey) out += literals_of_token(parser, text, stop, pos);
  return out;
}

}  // namespace lockstep::cli
