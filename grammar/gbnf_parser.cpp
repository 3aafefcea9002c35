// grammar/gbnf_parser.cpp — llama.cpp's GBNF dialect → grammar IR, parsed with PEGTL.
//
// Layout rules follow llama.cpp's grammar-parser: a rule ends at the end of its line,
// except inside parentheses and right after `|`, where newlines are whitespace. Unlike
// llama.cpp, a raw line break inside a string literal or character class is an error
// (write \n), so that an unterminated literal is reported on its own line.
#include <cstdlib>
#include <string>
#include <unordered_map>

#include <fmt/format.h>
#include <tao/pegtl.hpp>

#include "grammar/grammar.h"
#include "grammar/limits.h"
#include "grammar/utf8.h"

namespace lockstep {
namespace {

namespace peg = tao::pegtl;

// Repetition bounds `{m,n}` and parenthesis nesting are bounded by EngineLimits
// (repetition_bound, nesting_depth): the parser and the compiler recurse once per level.

// ---------------------------------------------------------------------------------
// PEG grammar

struct comment : peg::seq<peg::one<'#'>, peg::star<peg::not_one<'\n', '\r'>>> {};
struct sp_inline : peg::star<peg::sor<peg::one<' ', '\t'>, comment>> {};
struct sp_any : peg::star<peg::sor<peg::one<' ', '\t', '\n', '\r'>, comment>> {};

struct name : peg::plus<peg::sor<peg::alnum, peg::one<'-', '_'>>> {};

struct esc_x : peg::seq<peg::one<'x'>, peg::rep<2, peg::xdigit>> {};
struct esc_u : peg::seq<peg::one<'u'>, peg::rep<4, peg::xdigit>> {};
struct esc_U : peg::seq<peg::one<'U'>, peg::rep<8, peg::xdigit>> {};
struct esc_char : peg::one<'n', 't', 'r', 'f', 'v', '\\', '"', '\'', '[', ']', '-', '^', '/'> {};
struct esc_body : peg::sor<esc_x, esc_u, esc_U, esc_char> {};
struct escape : peg::seq<peg::one<'\\'>, peg::must<esc_body>> {};

struct lit_plain : peg::utf8::not_one<'"', '\\', '\n', '\r'> {};
struct lit_char : peg::sor<escape, lit_plain> {};
struct lit_close : peg::one<'"'> {};
struct literal : peg::seq<peg::one<'"'>, peg::star<lit_char>, peg::must<lit_close>> {};

struct class_plain : peg::utf8::not_one<']', '\\', '\n', '\r'> {};
struct class_char : peg::sor<escape, class_plain> {};
struct class_lo : class_char {};
struct class_hi : class_char {};
struct class_item : peg::seq<class_lo, peg::opt<peg::one<'-'>, peg::not_at<peg::one<']'>>,
                                                class_hi>> {};
struct class_open : peg::one<'['> {};
struct class_negate : peg::one<'^'> {};
struct class_close : peg::one<']'> {};
struct char_class
    : peg::seq<class_open, peg::opt<class_negate>, peg::star<class_item>, peg::must<class_close>> {};

struct any_char : peg::one<'.'> {};
struct token_ref : peg::seq<peg::opt<peg::one<'!'>>, peg::one<'<'>> {};
struct rule_ref : name {};

struct group_close : peg::one<')'> {};
template <typename S>
struct alternatives;
struct group_open : peg::one<'('> {};
struct group : peg::seq<group_open, sp_any, alternatives<sp_any>, peg::must<group_close>> {};

struct primary : peg::sor<literal, char_class, group, any_char, token_ref, rule_ref> {};

struct uint_value : peg::plus<peg::digit> {};
struct repeat_min : uint_value {};
struct repeat_max : uint_value {};
struct repeat_comma : peg::one<','> {};
struct brace_close : peg::one<'}'> {};
template <typename S>
struct repeat_tail
    : peg::sor<brace_close,
               peg::seq<repeat_comma, S, peg::opt<repeat_max, S>, peg::must<brace_close>>> {};
struct brace_open : peg::one<'{'> {};
template <typename S>
struct braces : peg::seq<brace_open, S, peg::must<repeat_min>, S, peg::must<repeat_tail<S>>> {};
struct star_op : peg::one<'*'> {};
struct plus_op : peg::one<'+'> {};
struct opt_op : peg::one<'?'> {};
template <typename S>
struct postfix : peg::sor<star_op, plus_op, opt_op, braces<S>> {};

template <typename S>
struct element : peg::seq<primary, S, peg::star<postfix<S>, S>> {};
template <typename S>
struct sequence : peg::star<element<S>> {};
struct alt_bar : peg::one<'|'> {};
template <typename S>
struct alternatives : peg::seq<sequence<S>, peg::star<alt_bar, sp_any, sequence<S>>> {};

struct defsym : peg::string<':', ':', '='> {};
struct rule_head : peg::seq<name, sp_inline, peg::must<defsym>> {};
struct rule_end : peg::sor<peg::eol, peg::eof> {};
struct rule_def : peg::seq<rule_head, sp_any, alternatives<sp_inline>, peg::must<rule_end>> {};
struct file_end : peg::eof {};
struct file : peg::seq<sp_any, peg::star<rule_def, sp_any>, peg::must<file_end>> {};

// ---------------------------------------------------------------------------------
// Error messages for must<> failures

template <typename Rule>
constexpr const char* expected = nullptr;
template <>
constexpr const char* expected<esc_body> =
    "unknown escape sequence (expected \\n \\t \\r \\\\ \\\" \\[ \\] \\xHH \\uHHHH or \\UHHHHHHHH)";
template <>
constexpr const char* expected<lit_close> = "unterminated string literal: expected '\"'";
template <>
constexpr const char* expected<class_close> = "unterminated character class: expected ']'";
template <>
constexpr const char* expected<group_close> = "expected ')' or another symbol";
template <>
constexpr const char* expected<repeat_min> = "expected a number after '{'";
template <>
constexpr const char* expected<brace_close> = "expected '}'";
template <>
constexpr const char* expected<repeat_tail<sp_any>> = "expected ',' or '}'";
template <>
constexpr const char* expected<repeat_tail<sp_inline>> = "expected ',' or '}'";
template <>
constexpr const char* expected<defsym> = "expected '::=' after the rule name";
template <>
constexpr const char* expected<rule_end> =
    "expected a symbol, '|' or the end of the line (use parentheses to continue a rule on the "
    "next line)";
template <>
constexpr const char* expected<file_end> = "expected a rule definition 'name ::= ...'";

SourceLocation location_of(const peg::position& p) {
  return SourceLocation{static_cast<uint32_t>(p.line), static_cast<uint32_t>(p.column),
                        static_cast<uint32_t>(p.byte)};
}

template <typename Rule>
struct control : peg::normal<Rule> {
  template <typename Input, typename... States>
  [[noreturn]] static void raise(const Input& in, States&&...) {
    const char* msg = expected<Rule>;
    throw GrammarError(location_of(in.position()),
                       msg ? msg : fmt::format("syntax error ({})", peg::demangle<Rule>()));
  }
};

// ---------------------------------------------------------------------------------
// Parse state and actions

struct Frame {
  std::vector<std::vector<Expr>> alternatives;  // each a sequence of elements
};

struct State {
  Grammar grammar;
  std::vector<Frame> frames;
  // Rule references are resolved after the whole file is read.
  std::unordered_map<std::string, uint32_t> name_ids;  // name → provisional id
  std::vector<std::string> names;
  std::vector<SourceLocation> first_use;
  std::vector<int64_t> defined_as;  // provisional id → rule index, -1 while undefined
  std::string rule_name;
  SourceLocation rule_where;
  uint32_t cp = 0;        // last decoded character
  uint32_t lo = 0, hi = 0;
  std::vector<CodepointRange> ranges;
  bool negated = false;
  std::string literal_bytes;
  uint64_t rep_min = 0, rep_max = 0;
  bool rep_has_comma = false, rep_has_max = false;

  uint32_t name_id(const std::string& n, SourceLocation where) {
    auto [it, inserted] = name_ids.try_emplace(n, static_cast<uint32_t>(names.size()));
    if (inserted) {
      names.push_back(n);
      first_use.push_back(where);
      defined_as.push_back(-1);
    }
    return it->second;
  }
  std::vector<Expr>& current_sequence() { return frames.back().alternatives.back(); }
  void push_element(Expr e) { current_sequence().push_back(std::move(e)); }
  void open_frame() { frames.push_back(Frame{{{}}}); }
  Expr close_frame() {
    Frame f = std::move(frames.back());
    frames.pop_back();
    std::vector<Expr> alts;
    for (auto& seq : f.alternatives) alts.push_back(Expr::sequence(std::move(seq)));
    return Expr::choice(std::move(alts));
  }
  void apply_postfix(uint32_t min, uint32_t max, SourceLocation where) {
    auto& seq = current_sequence();
    if (seq.empty()) throw GrammarError(where, "a repetition operator needs a symbol before it");
    Expr e = Expr::repeat(std::move(seq.back()), min, max);
    e.where = where;
    seq.back() = std::move(e);
  }
};

uint32_t parse_hex(std::string_view digits) {
  uint32_t v = 0;
  for (char c : digits) {
    v = v * 16 + static_cast<uint32_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return v;
}

template <typename Rule>
struct action : peg::nothing<Rule> {};

template <typename Input>
void check_codepoint(uint32_t cp, const Input& in) {
  if (cp > kMaxCodepoint || (cp >= 0xD800 && cp <= 0xDFFF)) {
    throw GrammarError(location_of(in.position()),
                       fmt::format("escape \\{} is not a Unicode scalar value", in.string()));
  }
}

template <>
struct action<esc_x> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    s.cp = parse_hex(in.string_view().substr(1));
  }
};
template <>
struct action<esc_u> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    s.cp = parse_hex(in.string_view().substr(1));
    check_codepoint(s.cp, in);
  }
};
template <>
struct action<esc_U> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    s.cp = parse_hex(in.string_view().substr(1));
    check_codepoint(s.cp, in);
  }
};
template <>
struct action<esc_char> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    switch (in.peek_char()) {
      case 'n': s.cp = '\n'; break;
      case 't': s.cp = '\t'; break;
      case 'r': s.cp = '\r'; break;
      case 'f': s.cp = '\f'; break;
      case 'v': s.cp = '\v'; break;
      default: s.cp = static_cast<uint8_t>(in.peek_char()); break;
    }
  }
};
struct decode_plain {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    size_t pos = 0;
    s.cp = utf8::decode(in.string_view(), pos);
  }
};
template <>
struct action<lit_plain> : decode_plain {};
template <>
struct action<class_plain> : decode_plain {};

template <>
struct action<lit_char> {
  template <typename Input>
  static void apply(const Input&, State& s) {
    utf8::append(s.literal_bytes, s.cp);
  }
};
template <>
struct action<literal> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    Expr e = Expr::literal(std::move(s.literal_bytes));
    e.where = location_of(in.position());
    s.literal_bytes.clear();
    s.push_element(std::move(e));
  }
};

template <>
struct action<class_open> {
  template <typename Input>
  static void apply(const Input&, State& s) {
    s.ranges.clear();
    s.negated = false;
  }
};
template <>
struct action<class_negate> {
  template <typename Input>
  static void apply(const Input&, State& s) {
    s.negated = true;
  }
};
template <>
struct action<class_lo> {
  template <typename Input>
  static void apply(const Input&, State& s) {
    s.lo = s.hi = s.cp;
  }
};
template <>
struct action<class_hi> {
  template <typename Input>
  static void apply(const Input&, State& s) {
    s.hi = s.cp;
  }
};
template <>
struct action<class_item> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    if (s.lo > s.hi) {
      throw GrammarError(location_of(in.position()),
                         fmt::format("character range '{}' is out of order (U+{:04X} > U+{:04X})",
                                     in.string(), s.lo, s.hi));
    }
    s.ranges.push_back({s.lo, s.hi});
  }
};
template <>
struct action<char_class> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    Expr e = Expr::char_class(std::move(s.ranges), s.negated);
    e.where = location_of(in.position());
    s.ranges.clear();
    s.push_element(std::move(e));
  }
};
template <>
struct action<any_char> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    Expr e = Expr::any_codepoint();
    e.where = location_of(in.position());
    s.push_element(std::move(e));
  }
};
template <>
struct action<token_ref> {
  template <typename Input>
  [[noreturn]] static void apply(const Input& in, State&) {
    throw GrammarError(location_of(in.position()),
                       "token references (<[id]>, <token>, !<...>) are not supported: write the "
                       "token's text as a string literal instead");
  }
};
template <>
struct action<rule_ref> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    const SourceLocation where = location_of(in.position());
    Expr e = Expr::rule_ref(s.name_id(in.string(), where));
    e.where = where;
    s.push_element(std::move(e));
  }
};
template <>
struct action<group_open> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    if (s.frames.size() > engine_limits().nesting_depth) {
      throw LimitError(ErrorLocation::at(location_of(in.position())), "nesting_depth", engine_limits().nesting_depth,
                       "the nesting of parentheses");
    }
    s.open_frame();
  }
};
template <>
struct action<group_close> {
  template <typename Input>
  static void apply(const Input&, State& s) {
    Expr e = s.close_frame();
    s.push_element(std::move(e));
  }
};
template <>
struct action<alt_bar> {
  template <typename Input>
  static void apply(const Input&, State& s) {
    s.frames.back().alternatives.emplace_back();
  }
};

template <>
struct action<star_op> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    s.apply_postfix(0, kUnbounded, location_of(in.position()));
  }
};
template <>
struct action<plus_op> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    s.apply_postfix(1, kUnbounded, location_of(in.position()));
  }
};
template <>
struct action<opt_op> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    s.apply_postfix(0, 1, location_of(in.position()));
  }
};

template <typename Input>
uint64_t parse_bound(const Input& in) {
  const std::string digits = in.string();
  if (digits.size() > 18 || std::strtoull(digits.c_str(), nullptr, 10) > engine_limits().repetition_bound) {
    throw LimitError(ErrorLocation::at(location_of(in.position())), "repetition_bound",
                     engine_limits().repetition_bound, fmt::format("the repetition bound {}", digits));
  }
  return std::strtoull(digits.c_str(), nullptr, 10);
}

template <>
struct action<brace_open> {
  template <typename Input>
  static void apply(const Input&, State& s) {
    s.rep_has_comma = s.rep_has_max = false;
  }
};
template <>
struct action<repeat_min> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    s.rep_min = parse_bound(in);
  }
};
template <>
struct action<repeat_max> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    s.rep_max = parse_bound(in);
    s.rep_has_max = true;
  }
};
template <>
struct action<repeat_comma> {
  template <typename Input>
  static void apply(const Input&, State& s) {
    s.rep_has_comma = true;
  }
};
template <typename S>
struct action<braces<S>> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    const uint64_t min = s.rep_min;
    const uint64_t max = !s.rep_has_comma ? s.rep_min : s.rep_has_max ? s.rep_max : kUnbounded;
    if (max < min) {
      throw GrammarError(location_of(in.position()),
                         fmt::format("repetition {} has its maximum below its minimum", in.string()));
    }
    s.apply_postfix(static_cast<uint32_t>(min), static_cast<uint32_t>(max),
                    location_of(in.position()));
  }
};

template <>
struct action<rule_head> {
  template <typename Input>
  static void apply(const Input& in, State& s) {
    std::string_view text = in.string_view();
    size_t n = 0;
    while (n < text.size() && (std::isalnum(static_cast<unsigned char>(text[n])) ||
                               text[n] == '-' || text[n] == '_')) {
      ++n;
    }
    s.rule_name = std::string(text.substr(0, n));
    s.rule_where = location_of(in.position());
    s.open_frame();
  }
};
template <>
struct action<rule_def> {
  template <typename Input>
  static void apply(const Input&, State& s) {
    Expr body = s.close_frame();
    const uint32_t id = s.name_id(s.rule_name, s.rule_where);
    if (s.defined_as[id] >= 0) {
      const auto& first = s.grammar.rules[s.defined_as[id]].where;
      throw GrammarError(s.rule_where, fmt::format("rule '{}' is defined twice (first at {}:{})",
                                                   s.rule_name, first.line, first.column));
    }
    s.defined_as[id] = s.grammar.add_rule(s.rule_name, std::move(body), s.rule_where);
  }
};

void resolve_refs(Expr& e, const State& s) {
  if (e.kind == Expr::Kind::kRuleRef) {
    const int64_t target = s.defined_as[e.rule];
    if (target < 0) {
      throw GrammarError(e.where, fmt::format("undefined rule '{}'", s.names[e.rule]));
    }
    e.rule = static_cast<uint32_t>(target);
  }
  for (auto& c : e.children) resolve_refs(c, s);
}

SourceLocation location_at_offset(std::string_view text, size_t offset) {
  SourceLocation loc{1, 1, static_cast<uint32_t>(offset)};
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++loc.line;
      loc.column = 1;
    } else {
      ++loc.column;
    }
  }
  return loc;
}

}  // namespace

Grammar parse_gbnf(std::string_view text, std::string_view root_rule) {
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    if (utf8::decode(text, pos) == utf8::kInvalid) {
      throw GrammarError(location_at_offset(text, start),
                         fmt::format("invalid UTF-8 byte 0x{:02X}", static_cast<uint8_t>(text[start])));
    }
  }
  State state;
  peg::memory_input<> in(text.data(), text.size(), "grammar");
  peg::parse<file, action, control>(in, state);
  for (auto& rule : state.grammar.rules) resolve_refs(rule.body, state);
  if (state.grammar.rules.empty()) throw GrammarError("the grammar is empty: it defines no rules");
  const int64_t root = state.grammar.find_rule(root_rule);
  if (root < 0) {
    throw GrammarError(fmt::format("the grammar has no '{}' rule (the start symbol)", root_rule));
  }
  state.grammar.root = static_cast<uint32_t>(root);
  validate(state.grammar);
  return std::move(state.grammar);
}

}  // namespace lockstep
