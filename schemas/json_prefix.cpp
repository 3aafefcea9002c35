// schemas/json_prefix.cpp — see json_prefix.h.
#include "schemas/json_prefix.h"

#include <vector>

#include <nlohmann/json.hpp>

namespace lockstep {

namespace {

using Place = JsonPrefixPosition::Place;

struct Container {
  bool object;
  std::string pointer;
  std::string key;  // objects: the current member's name
  size_t index = 0;  // arrays: the current item's index
};

enum class Expect { kValue, kValueOrClose, kKey, kKeyOrClose, kColon, kCommaOrClose, kEnd };

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_scalar_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' || c == '-' ||
         c == '.';
}

// The name a raw string token spells ("…", with its opening quote; closing one when
// `complete`). A partial one loses what is not yet a whole escape or UTF-8 character.
std::string decode_name(std::string raw, bool complete) {
  if (!complete) {
    // A trailing backslash, \u with fewer than 4 digits, or a lone high surrogate.
    size_t slashes = 0;
    while (slashes < raw.size() - 1 && raw[raw.size() - 1 - slashes] == '\\') ++slashes;
    if (slashes % 2 == 1) raw.pop_back();
    const size_t u = raw.rfind("\\u");
    if (u != std::string::npos && u > 0 && raw.size() - u < 6) {
      size_t before = 0;
      while (before < u && raw[u - 1 - before] == '\\') ++before;
      if (before % 2 == 0) raw.resize(u);
    }
    raw += '"';
  }
  // Retry without the last bytes: a cut UTF-8 sequence or a surrogate waiting for its pair.
  for (int attempt = 0; attempt < 8 && raw.size() >= 2; ++attempt) {
    try {
      return nlohmann::json::parse(raw).get<std::string>();
    } catch (const nlohmann::json::exception&) {
      if (complete) break;
      raw.erase(raw.size() - 2, 1);
    }
  }
  return raw.substr(1, raw.size() >= 2 ? raw.size() - 2 : 0);
}

}  // namespace

std::string json_pointer_token(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

JsonPrefixPosition scan_json_prefix(std::string_view s) {
  JsonPrefixPosition pos;
  std::vector<Container> stack;
  Expect expect = Expect::kValue;
  enum class Token { kNone, kString, kName, kScalar } token = Token::kNone;
  size_t token_start = 0;
  bool escaped = false;
  std::string raw_name;

  auto value_pointer = [&] {
    if (stack.empty()) return std::string();
    const Container& c = stack.back();
    return c.pointer + "/" + (c.object ? json_pointer_token(c.key) : std::to_string(c.index));
  };
  auto end_value = [&] { expect = stack.empty() ? Expect::kEnd : Expect::kCommaOrClose; };

  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (token == Token::kString || token == Token::kName) {
      if (token == Token::kName) raw_name += c;
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        if (token == Token::kName) {
          stack.back().key = decode_name(raw_name, true);
          expect = Expect::kColon;
        } else {
          end_value();
        }
        token = Token::kNone;
      }
      continue;
    }
    if (token == Token::kScalar) {
      if (is_scalar_char(c)) continue;
      token = Token::kNone;
      end_value();
    }
    if (is_ws(c)) continue;
    bool ok = true;
    switch (expect) {
      case Expect::kValueOrClose:
        if (c == ']') {
          stack.pop_back();
          end_value();
          break;
        }
        [[fallthrough]];
      case Expect::kValue:
        if (c == '{') {
          stack.push_back({true, value_pointer(), {}, 0});
          expect = Expect::kKeyOrClose;
        } else if (c == '[') {
          stack.push_back({false, value_pointer(), {}, 0});
          expect = Expect::kValueOrClose;
        } else if (c == '"') {
          token = Token::kString;
          token_start = i;
        } else if (is_scalar_char(c)) {
          token = Token::kScalar;
          token_start = i;
        } else {
          ok = false;
        }
        break;
      case Expect::kKeyOrClose:
        if (c == '}') {
          stack.pop_back();
          end_value();
          break;
        }
        [[fallthrough]];
      case Expect::kKey:
        if (c == '"') {
          token = Token::kName;
          token_start = i;
          raw_name = "\"";
        } else {
          ok = false;
        }
        break;
      case Expect::kColon:
        ok = c == ':';
        if (ok) expect = Expect::kValue;
        break;
      case Expect::kCommaOrClose: {
        Container& top = stack.back();
        if (c == ',') {
          if (top.object) {
            expect = Expect::kKey;
          } else {
            ++top.index;
            expect = Expect::kValue;
          }
        } else if (c == (top.object ? '}' : ']')) {
          stack.pop_back();
          end_value();
        } else {
          ok = false;
        }
        break;
      }
      case Expect::kEnd:
        ok = false;
        break;
    }
    if (!ok) {
      pos.valid = false;
      pos.invalid_at = i;
      break;
    }
  }

  switch (token) {
    case Token::kString:
    case Token::kScalar:
      pos.place = Place::kInValue;
      pos.pointer = value_pointer();
      pos.token_start = token_start;
      pos.in_string = token == Token::kString;
      return pos;
    case Token::kName:
      pos.place = Place::kInKey;
      pos.pointer = stack.back().pointer;
      pos.key = decode_name(raw_name, false);
      pos.token_start = token_start;
      pos.in_string = true;
      return pos;
    case Token::kNone:
      break;
  }
  switch (expect) {
    case Expect::kValue:
    case Expect::kValueOrClose:
      pos.place = Place::kBeforeValue;
      pos.pointer = value_pointer();
      break;
    case Expect::kKey:
    case Expect::kKeyOrClose:
      pos.place = Place::kBeforeKey;
      pos.pointer = stack.back().pointer;
      break;
    case Expect::kColon:
      pos.place = Place::kAfterKey;
      pos.pointer = value_pointer();
      pos.key = stack.back().key;
      break;
    case Expect::kCommaOrClose:
      pos.place = Place::kAfterValue;
      pos.pointer = stack.back().pointer;
      break;
    case Expect::kEnd:
      pos.place = Place::kAfterValue;
      break;
  }
  return pos;
}

}  // namespace lockstep
