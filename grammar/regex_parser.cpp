// grammar/regex_parser.cpp — regular expressions → grammar IR (a recursive-descent parser
// in the manner of RE2's parse.cc: one pass, flags scoped to groups, errors with positions).
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "grammar/grammar.h"
#include "grammar/limits.h"
#include "grammar/unicode.h"
#include "grammar/utf8.h"

namespace lockstep {

namespace {

struct Flags {
  bool icase = false;
  bool dotall = false;
};

class RegexParser {
 public:
  RegexParser(std::string_view pattern, const RegexOptions& opt) : p_(pattern), opt_(opt) {}

  Expr parse() {
    for (size_t i = 0; i < p_.size();) {
      const size_t at = i;
      if (utf8::decode(p_, i) == utf8::kInvalid) fail(at, "invalid UTF-8 in the pattern");
    }
    // In a search, the top-level alternatives are grouped by their anchors and each group
    // gets one unanchored prefix and suffix: `.*(a|b).*`, not `.*a.*|.*b.*`, whose
    // automaton would tell apart every subset of alternatives already matched (2^n states
    // before minimization).
    std::vector<Expr> alts;
    std::vector<Expr> groups[2][2];  // [anchored at the start][anchored at the end]
    for (;;) {
      bool start = false, end = false;
      Expr e = parse_concat(/*top=*/true, start, end);
      (opt_.search ? groups[start][end] : alts).push_back(std::move(e));
      if (pos_ < p_.size() && p_[pos_] == '|') {
        ++pos_;
        continue;
      }
      break;
    }
    if (pos_ < p_.size()) fail(pos_, "unmatched ')'");
    for (int start = 0; start < 2; ++start) {
      for (int end = 0; end < 2; ++end) {
        std::vector<Expr>& g = groups[start][end];
        if (g.empty()) continue;
        std::vector<Expr> seq;
        if (!start) seq.push_back(any_repeat());
        seq.push_back(g.size() == 1 ? std::move(g[0]) : Expr::choice(std::move(g)));
        if (!end) seq.push_back(any_repeat());
        alts.push_back(Expr::sequence(std::move(seq)));
      }
    }
    return Expr::choice(std::move(alts));
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& message) const { throw GrammarError(where(at), message); }
  [[noreturn]] void limit_fail(size_t at, const char* limit, uint64_t value, const std::string& what_needed) const {
    throw LimitError(ErrorLocation::at(where(at)), limit, value, what_needed);
  }
  SourceLocation where(size_t at) const {
    SourceLocation loc{1, 1, static_cast<uint32_t>(at)};
    for (size_t i = 0; i < at && i < p_.size(); ++i) {
      if (p_[i] == '\n') {
        ++loc.line;
        loc.column = 1;
      } else {
        ++loc.column;
      }
    }
    return loc;
  }

  bool at_end() const { return pos_ >= p_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < p_.size() ? p_[pos_ + ahead] : '\0'; }

  uint32_t take_codepoint() {
    const size_t at = pos_;
    const uint32_t cp = utf8::decode(p_, pos_);
    if (cp == utf8::kInvalid) fail(at, "invalid UTF-8 in the pattern");
    return cp;
  }

  static Expr any_repeat() { return Expr::repeat(Expr::any_codepoint(), 0, kUnbounded); }

  // A class that also contains every case variant of its members.
  static std::vector<CodepointRange> fold_case(std::vector<CodepointRange> ranges) {
    std::vector<CodepointRange> extra;
    for (const auto& r : ranges) {
      // Letters with case variants all sit below U+1F000; walk only what is needed.
      const uint32_t hi = std::min<uint32_t>(r.hi, 0x1EFFF);
      if (hi - std::min(r.lo, hi) > 0x20000) continue;
      for (uint32_t cp = r.lo; cp <= hi; ++cp) {
        for (uint32_t v : unicode::case_variants(cp)) extra.push_back({v, v});
      }
    }
    ranges.insert(ranges.end(), extra.begin(), extra.end());
    return Expr::char_class(std::move(ranges)).ranges;
  }

  Expr make_class(std::vector<CodepointRange> ranges, bool negated) const {
    Expr e = Expr::char_class(std::move(ranges), false);
    if (flags_.icase) e.ranges = fold_case(std::move(e.ranges));
    if (negated) e = Expr::char_class(std::move(e.ranges), true);
    return e;
  }

  Expr literal_codepoint(uint32_t cp) const {
    if (flags_.icase && !unicode::case_variants(cp).empty()) {
      std::vector<CodepointRange> r;
      for (uint32_t v : unicode::case_variants(cp)) r.push_back({v, v});
      return Expr::char_class(std::move(r));
    }
    return Expr::literal(utf8::encode(cp));
  }

  // Concatenation up to '|', ')' or the end. At the top level, '^' may open it and '$'
  // may close it.
  Expr parse_concat(bool top, bool& start_anchor, bool& end_anchor) {
    std::vector<Expr> items;
    if (top && (peek() == '^' || (peek() == '\\' && peek(1) == 'A'))) {
      pos_ += peek() == '^' ? 1 : 2;
      start_anchor = true;
    }
    while (!at_end() && peek() != '|' && peek() != ')') {
      const size_t at = pos_;
      const bool dollar = peek() == '$';
      const bool z = peek() == '\\' && peek(1) == 'z';
      if (dollar || z) {
        const size_t after = pos_ + (dollar ? 1 : 2);
        if (top && (after == p_.size() || p_[after] == '|')) {
          pos_ = after;
          end_anchor = true;
          break;
        }
        fail(at, "anchors ($, \\z) are only supported at the end of the pattern");
      }
      if (peek() == '^' || (peek() == '\\' && peek(1) == 'A')) {
        fail(at, "anchors (^, \\A) are only supported at the start of the pattern");
      }
      Expr atom = parse_atom();
      atom = parse_quantifiers(std::move(atom), at);
      // Merge adjacent literals.
      if (!items.empty() && items.back().kind == Expr::Kind::kLiteral && atom.kind == Expr::Kind::kLiteral) {
        items.back().bytes += atom.bytes;
      } else {
        items.push_back(std::move(atom));
      }
    }
    return Expr::sequence(std::move(items));
  }

  Expr parse_alternation() {
    std::vector<Expr> alts;
    for (;;) {
      bool s = false, e = false;
      alts.push_back(parse_concat(false, s, e));
      if (peek() != '|') break;
      ++pos_;
    }
    return Expr::choice(std::move(alts));
  }

  bool parse_uint(uint32_t& value) {
    const size_t start = pos_;
    uint64_t v = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      v = v * 10 + static_cast<uint64_t>(peek() - '0');
      if (v > engine_limits().repetition_bound) {
        size_t end = pos_;
        while (end < p_.size() && p_[end] >= '0' && p_[end] <= '9') ++end;
        limit_fail(start, "repetition_bound", engine_limits().repetition_bound,
                   fmt::format("the repetition count {}", p_.substr(start, end - start)));
      }
      ++pos_;
    }
    value = static_cast<uint32_t>(v);
    return pos_ > start;
  }

  // At '{': a repetition {m}, {m,}, {m,n}. Returns false (position unchanged) when the brace
  // does not start one, in which case it is a literal '{'.
  bool parse_braces(uint32_t& min, uint32_t& max) {
    const size_t start = pos_;
    ++pos_;
    if (!parse_uint(min)) {
      pos_ = start;
      return false;
    }
    max = min;
    if (peek() == ',') {
      ++pos_;
      max = kUnbounded;
      if (peek() != '}') {
        if (!parse_uint(max)) {
          pos_ = start;
          return false;
        }
      }
    }
    if (peek() != '}') {
      pos_ = start;
      return false;
    }
    ++pos_;
    if (max < min) fail(start, fmt::format("repetition {} has its maximum below its minimum",
                                           std::string(p_.substr(start, pos_ - start))));
    return true;
  }

  Expr parse_quantifiers(Expr atom, size_t atom_at) {
    bool repeated = false;
    for (;;) {
      const size_t at = pos_;
      uint32_t min = 0, max = 0;
      const char c = peek();
      if (c == '*') {
        min = 0, max = kUnbounded, ++pos_;
      } else if (c == '+') {
        min = 1, max = kUnbounded, ++pos_;
      } else if (c == '?') {
        min = 0, max = 1, ++pos_;
      } else if (c == '{' && parse_braces(min, max)) {
      } else {
        return atom;
      }
      if (repeated) fail(at, "a repetition cannot be repeated directly (use a group)");
      repeated = true;
      if (peek() == '?') {
        ++pos_;  // lazy: the same language
      } else if (peek() == '+') {
        fail(pos_, "possessive quantifiers are not supported");
      }
      (void)atom_at;
      atom = Expr::repeat(std::move(atom), min, max);
    }
  }

  Expr parse_group() {
    const size_t open = pos_;
    ++pos_;  // '('
    if (++depth_ > engine_limits().nesting_depth) {
      limit_fail(open, "nesting_depth", engine_limits().nesting_depth, "the nesting of groups");
    }
    const Flags saved = flags_;
    if (peek() == '?') {
      const char k = peek(1);
      if (k == '=' || k == '!' || (k == '<' && (peek(2) == '=' || peek(2) == '!'))) {
        fail(open, "lookaround assertions are not regular and are not supported");
      }
      if (k == ':') {
        pos_ += 2;
      } else if (k == '<' || (k == 'P' && peek(2) == '<')) {
        pos_ += k == '<' ? 2 : 3;
        const size_t name_at = pos_;
        while (!at_end() && peek() != '>') {
          const char ch = peek();
          if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) fail(pos_, "invalid group name");
          ++pos_;
        }
        if (at_end() || pos_ == name_at) fail(name_at, "a named group needs a name and '>'");
        ++pos_;
      } else {
        // Flags: (?flags) for the rest of the enclosing group, or (?flags:...).
        pos_ += 1;
        bool negate = false;
        while (!at_end() && peek() != ')' && peek() != ':') {
          const char f = peek();
          if (f == '-' && !negate) {
            negate = true;
          } else if (f == 'i') {
            flags_.icase = !negate;
          } else if (f == 's') {
            flags_.dotall = !negate;
          } else if (f == 'U') {
            // ungreedy: the same language
          } else if (f == 'm') {
            fail(pos_, "the multi-line flag (?m) is not supported (anchors only at the ends)");
          } else {
            fail(pos_, fmt::format("unknown flag '{}'", f));
          }
          ++pos_;
        }
        if (at_end()) fail(open, "missing ')'");
        if (peek() == ')') {
          ++pos_;
          --depth_;
          return Expr::empty();  // flags stay set until the enclosing group ends
        }
        ++pos_;  // ':'
      }
    }
    Expr inner = parse_alternation();
    if (peek() != ')') fail(open, "missing ')' for this '('");
    ++pos_;
    flags_ = saved;
    --depth_;
    return inner;
  }

  Expr parse_atom() {
    const size_t at = pos_;
    const char c = peek();
    switch (c) {
      case '(': {
        // A flag group applies to what follows in the enclosing group: parse that here.
        Expr g = parse_group();
        return g;
      }
      case '[':
        return parse_class();
      case '.': {
        ++pos_;
        if (flags_.dotall) return Expr::any_codepoint();
        if (opt_.ecma) return Expr::char_class({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}, true);
        return Expr::char_class({{'\n', '\n'}}, true);
      }
      case '*':
      case '+':
      case '?':
        fail(at, fmt::format("nothing to repeat before '{}'", c));
      case '{': {
        uint32_t a, b;
        if (parse_braces(a, b)) fail(at, "nothing to repeat before '{'");
        ++pos_;
        return literal_codepoint('{');
      }
      case '\\':
        return parse_escape();
      default:
        return literal_codepoint(take_codepoint());
    }
  }

  uint32_t parse_hex(size_t digits_min, size_t digits_max, size_t at) {
    uint32_t v = 0;
    size_t n = 0;
    while (n < digits_max && std::isxdigit(static_cast<unsigned char>(peek()))) {
      const char h = peek();
      v = v * 16 + static_cast<uint32_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
      if (v > kMaxCodepoint) fail(at, "code point above U+10FFFF");
      ++pos_, ++n;
    }
    if (n < digits_min) fail(at, "expected hexadecimal digits");
    return v;
  }

  // \x.., \u.. with or without braces.
  uint32_t parse_hex_escape(char kind, size_t at) {
    if (peek() == '{') {
      ++pos_;
      const uint32_t v = parse_hex(1, 8, at);
      if (peek() != '}') fail(at, "expected '}'");
      ++pos_;
      return v;
    }
    return parse_hex(kind == 'x' ? 2 : 4, kind == 'x' ? 2 : 4, at);
  }

  std::vector<CodepointRange> property(bool negated_escape, size_t at) {
    std::string name;
    bool negated = negated_escape;
    if (peek() == '{') {
      ++pos_;
      while (!at_end() && peek() != '}') name += p_[pos_++];
      if (at_end()) fail(at, "expected '}' after the property name");
      ++pos_;
      if (!name.empty() && name[0] == '^') {
        negated = !negated;
        name.erase(0, 1);
      }
      const size_t eq = name.find('=');
      if (eq != std::string::npos) {
        const std::string key = name.substr(0, eq);
        if (key != "General_Category" && key != "gc") {
          fail(at, fmt::format("Unicode property '{}' is not supported (general categories are)", name));
        }
        name = name.substr(eq + 1);
      }
    } else {
      if (at_end()) fail(at, "expected a property name after \\p");
      name = std::string(1, p_[pos_++]);
    }
    std::vector<CodepointRange> r;
    if (name == "Any") {
      r = {{0, kMaxCodepoint}};
    } else {
      r = unicode::general_category(name);
      if (r.empty()) fail(at, fmt::format("unknown Unicode property '{}' (general categories like L, Lu, N, Nd, P, S, Z, C are supported)", name));
    }
    return negated ? Expr::char_class(std::move(r), true).ranges : r;
  }

  // A set escape (\d \w \s \D \W \S \p \P): its ranges, or false when the escape is not one.
  bool set_escape(char k, size_t at, std::vector<CodepointRange>& out) {
    switch (k) {
      case 'd': out = {{'0', '9'}}; return true;
      case 'D': out = Expr::char_class({{'0', '9'}}, true).ranges; return true;
      case 'w': out = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; return true;
      case 'W': out = Expr::char_class({{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}, true).ranges; return true;
      case 's':
      case 'S': {
        std::vector<CodepointRange> s;
        if (opt_.ecma) {
          s = {{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A}, {0x2028, 0x2029},
               {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
        } else {
          s = {{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}};
        }
        out = k == 's' ? Expr::char_class(std::move(s)).ranges : Expr::char_class(std::move(s), true).ranges;
        return true;
      }
      case 'p':
      case 'P':
        out = property(k == 'P', at);
        return true;
      default:
        return false;
    }
  }

  // A single-character escape (after the backslash), inside or outside a class.
  uint32_t char_escape(char k, size_t at, bool in_class) {
    switch (k) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case 'a': return 0x07;
      case '0':
        if (std::isdigit(static_cast<unsigned char>(peek()))) fail(at, "octal escapes are not supported");
        return 0;
      case 'x':
      case 'u': {
        const uint32_t v = parse_hex_escape(k, at);
        if (v >= 0xD800 && v <= 0xDFFF) fail(at, "surrogate code points cannot be matched in UTF-8");
        return v;
      }
      case 'c': {
        const char l = peek();
        if (!std::isalpha(static_cast<unsigned char>(l))) fail(at, "\\c needs a letter");
        ++pos_;
        return static_cast<uint32_t>(l) & 31;
      }
      case 'b':
        if (in_class) return 0x08;
        fail(at, "word boundaries (\\b) are not supported");
      case 'B':
        fail(at, "word boundaries (\\B) are not supported");
      case 'k':
        fail(at, "backreferences are not regular and are not supported");
      default:
        break;
    }
    if (k >= '1' && k <= '9') fail(at, "backreferences are not regular and are not supported");
    if (std::isalnum(static_cast<unsigned char>(k))) fail(at, fmt::format("unknown escape \\{}", k));
    return static_cast<uint8_t>(k);
  }

  Expr parse_escape() {
    const size_t at = pos_;
    ++pos_;
    if (at_end()) fail(at, "the pattern ends with a lone backslash");
    if (static_cast<uint8_t>(peek()) >= 0x80) return literal_codepoint(take_codepoint());
    const char k = p_[pos_++];
    std::vector<CodepointRange> set;
    if (set_escape(k, at, set)) return make_class(std::move(set), false);
    return literal_codepoint(char_escape(k, at, false));
  }

  Expr parse_class() {
    const size_t open = pos_;
    ++pos_;
    bool negated = false;
    if (peek() == '^') {
      negated = true;
      ++pos_;
    }
    std::vector<CodepointRange> ranges;
    bool first = true;
    for (;;) {
      if (at_end()) fail(open, "missing ']' for this '['");
      if (peek() == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      const size_t item_at = pos_;
      // POSIX class [:name:]
      if (peek() == '[' && peek(1) == ':') {
        const size_t close = p_.find(":]", pos_ + 2);
        if (close != std::string_view::npos) {
          std::string name(p_.substr(pos_ + 2, close - pos_ - 2));
          bool neg = false;
          if (!name.empty() && name[0] == '^') neg = true, name.erase(0, 1);
          std::vector<CodepointRange> r = posix_class(name, item_at);
          if (neg) r = Expr::char_class(std::move(r), true).ranges;
          ranges.insert(ranges.end(), r.begin(), r.end());
          pos_ = close + 2;
          continue;
        }
      }
      uint32_t lo;
      if (peek() == '\\') {
        ++pos_;
        if (at_end()) fail(item_at, "the pattern ends with a lone backslash");
        const char k = p_[pos_++];
        std::vector<CodepointRange> set;
        if (set_escape(k, item_at, set)) {
          if (peek() == '-' && peek(1) != ']') fail(item_at, "a class escape cannot start a range");
          ranges.insert(ranges.end(), set.begin(), set.end());
          continue;
        }
        lo = char_escape(k, item_at, true);
      } else {
        lo = take_codepoint();
      }
      uint32_t hi = lo;
      if (peek() == '-' && peek(1) != ']' && pos_ + 1 < p_.size()) {
        ++pos_;
        const size_t hi_at = pos_;
        if (peek() == '\\') {
          ++pos_;
          if (at_end()) fail(hi_at, "the pattern ends with a lone backslash");
          const char k = p_[pos_++];
          std::vector<CodepointRange> set;
          if (set_escape(k, hi_at, set)) fail(hi_at, "a class escape cannot end a range");
          hi = char_escape(k, hi_at, true);
        } else {
          hi = take_codepoint();
        }
        if (hi < lo) {
          fail(item_at, fmt::format("character range '{}' is out of order",
                                    std::string(p_.substr(item_at, pos_ - item_at))));
        }
      }
      ranges.push_back({lo, hi});
    }
    return make_class(std::move(ranges), negated);
  }

  std::vector<CodepointRange> posix_class(const std::string& name, size_t at) const {
    if (name == "alpha") return {{'A', 'Z'}, {'a', 'z'}};
    if (name == "digit") return {{'0', '9'}};
    if (name == "alnum") return {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}};
    if (name == "upper") return {{'A', 'Z'}};
    if (name == "lower") return {{'a', 'z'}};
    if (name == "space") return {{'\t', '\r'}, {' ', ' '}};
    if (name == "blank") return {{'\t', '\t'}, {' ', ' '}};
    if (name == "punct") return {{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}};
    if (name == "xdigit") return {{'0', '9'}, {'A', 'F'}, {'a', 'f'}};
    if (name == "word") return {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
    if (name == "cntrl") return {{0, 0x1F}, {0x7F, 0x7F}};
    if (name == "print") return {{' ', '~'}};
    if (name == "graph") return {{'!', '~'}};
    if (name == "ascii") return {{0, 0x7F}};
    fail(at, fmt::format("unknown POSIX class [:{}:]", name));
  }

  std::string_view p_;
  RegexOptions opt_;
  size_t pos_ = 0;
  uint64_t depth_ = 0;
  Flags flags_;
};

}  // namespace

Expr regex_to_expr(std::string_view pattern, const RegexOptions& options) {
  return RegexParser(pattern, options).parse();
}

Grammar parse_regex(std::string_view pattern, const RegexOptions& options) {
  Grammar g;
  // The rule is the whole pattern: errors about it (an empty language, an automaton past a
  // limit) point at 1:1, where it starts.
  g.root = g.add_rule("root", regex_to_expr(pattern, options), SourceLocation{1, 1, 0});
  validate(g);
  return g;
}

}  // namespace lockstep
