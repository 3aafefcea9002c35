// grammar/ir.cpp — construction, validation and printing of the grammar IR.
#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "grammar/char_dfa.h"
#include "grammar/diagnostics.h"
#include "grammar/grammar.h"
#include "grammar/utf8.h"

namespace lockstep {

GrammarError::GrammarError(SourceLocation where, const std::string& message)
    : Error(ErrorLocation::at(where), message) {}

GrammarError::GrammarError(const std::string& message) : Error(message) {}

Expr Expr::empty() { return Expr{}; }

Expr Expr::literal(std::string utf8) {
  if (utf8.empty()) return empty();
  Expr e;
  e.kind = Kind::kLiteral;
  e.bytes = std::move(utf8);
  return e;
}

Expr Expr::char_class(std::vector<CodepointRange> ranges, bool negated) {
  std::sort(ranges.begin(), ranges.end(),
            [](const CodepointRange& a, const CodepointRange& b) { return a.lo < b.lo; });
  std::vector<CodepointRange> merged;
  for (auto r : ranges) {
    if (r.lo > r.hi) continue;
    r.hi = std::min(r.hi, kMaxCodepoint);
    if (r.lo > kMaxCodepoint) continue;
    if (!merged.empty() && r.lo <= merged.back().hi + 1) {
      merged.back().hi = std::max(merged.back().hi, r.hi);
    } else {
      merged.push_back(r);
    }
  }
  if (negated) {
    std::vector<CodepointRange> complement;
    uint32_t next = 0;
    for (const auto& r : merged) {
      if (r.lo > next) complement.push_back({next, r.lo - 1});
      next = r.hi + 1;
    }
    if (next <= kMaxCodepoint) complement.push_back({next, kMaxCodepoint});
    merged = std::move(complement);
  }
  // Surrogates are not characters: cut U+D800..U+DFFF out of every range.
  std::vector<CodepointRange> out;
  for (const auto& r : merged) {
    if (r.hi < 0xD800 || r.lo > 0xDFFF) {
      out.push_back(r);
      continue;
    }
    if (r.lo < 0xD800) out.push_back({r.lo, 0xD7FF});
    if (r.hi > 0xDFFF) out.push_back({0xE000, r.hi});
  }
  Expr e;
  e.kind = Kind::kCharClass;
  e.ranges = std::move(out);
  return e;
}

Expr Expr::any_codepoint() { return char_class({{0, kMaxCodepoint}}); }

Expr Expr::rule_ref(uint32_t rule) {
  Expr e;
  e.kind = Kind::kRuleRef;
  e.rule = rule;
  return e;
}

Expr Expr::sequence(std::vector<Expr> children) {
  std::erase_if(children, [](const Expr& c) { return c.kind == Kind::kEmpty; });
  if (children.empty()) return empty();
  if (children.size() == 1) return std::move(children[0]);
  Expr e;
  e.kind = Kind::kSequence;
  e.children = std::move(children);
  return e;
}

Expr Expr::choice(std::vector<Expr> children) {
  if (children.size() == 1) return std::move(children[0]);
  Expr e;
  e.kind = Kind::kChoice;
  e.children = std::move(children);
  return e;
}

Expr Expr::machine_walk(std::shared_ptr<const ElementMachine> machine, Expr separator, std::vector<Expr> elements) {
  // Every reader indexes the machine unchecked: a malformed one is refused here.
  const ElementMachine& m = *machine;
  const bool shaped = m.num_states() > 0 && m.move_begin.size() == m.num_states() + size_t{1} && m.move_begin[0] == 0 &&
                      m.move_begin.back() == m.moves.size() &&
                      std::is_sorted(m.move_begin.begin(), m.move_begin.end());
  if (!shaped) throw std::invalid_argument("machine walk: move_begin must hold num_states + 1 offsets into the moves");
  for (const auto& mv : m.moves) {
    if (mv.target >= m.num_states() || mv.element >= elements.size()) {
      throw std::invalid_argument(fmt::format("machine walk: a move to state {} of {} reads element {} of {}", mv.target,
                                              m.num_states(), mv.element, elements.size()));
    }
  }
  Expr e;
  e.kind = Kind::kMachine;
  e.machine = std::move(machine);
  e.children.reserve(elements.size() + 1);
  e.children.push_back(std::move(separator));
  for (Expr& x : elements) e.children.push_back(std::move(x));
  return e;
}

namespace {

// (C{m1,n1}){m2,n2} for any language C is C{k} for k in the union over j in [m2, n2] of
// [j·m1, j·n1] (C^a C^b = C^(a+b); j counts from [m1, n1] sum to every value between
// j·m1 and j·n1). When that union is one interval, returns it: `(a{1,300}){1,300}` is
// `a{1,90000}`, a 90,000-state automaton instead of a determinization of 90,000 NFA
// states in sets of thousands.
bool merge_counts(uint32_t m1, uint32_t n1, uint32_t m2, uint32_t n2, uint32_t& min, uint32_t& max) {
  if (n1 == 0 || n2 == 0) return false;
  // Consecutive intervals j and j+1 (j >= 1) touch when (j+1)·m1 <= j·n1 + 1, i.e.
  // j·(n1 - m1) >= m1 - 1: true from the first j on if at all. j = 0 gives {0}, which
  // touches [m1, n1] when m1 <= 1.
  if (m2 == 0 && m1 > 1) return false;
  const uint64_t j = std::max<uint32_t>(m2, 1);
  if (n2 > j && n1 != kUnbounded && j * (n1 - m1) + 1 < m1) return false;
  const uint64_t lo = uint64_t{m1} * m2;
  if (lo >= kUnbounded) return false;
  uint64_t hi = kUnbounded;
  if (n1 != kUnbounded && n2 != kUnbounded) {
    hi = uint64_t{n1} * n2;
    if (hi >= kUnbounded) return false;
  }
  min = static_cast<uint32_t>(lo);
  max = static_cast<uint32_t>(hi);
  return true;
}

}  // namespace

Expr Expr::repeat(Expr child, uint32_t min, uint32_t max) {
  if (max == 0 || child.kind == Kind::kEmpty) return empty();
  if (min == 1 && max == 1) return child;
  if (child.kind == Kind::kRepeat && merge_counts(child.min, child.max, min, max, min, max)) {
    Expr inner = std::move(child.children[0]);
    return repeat(std::move(inner), min, max);
  }
  Expr e;
  e.kind = Kind::kRepeat;
  e.min = min;
  e.max = max;
  e.children.push_back(std::move(child));
  return e;
}

namespace {

uint64_t name_hash(std::string_view name) { return fmix64(std::hash<std::string_view>{}(name)); }

}  // namespace

int64_t RuleNameIndex::find(const std::vector<Rule>& rules, std::string_view name) const {
  size_t slot = 0;
  const uint32_t k = slots_.find(
      name_hash(name), [&](uint32_t x) { return rule_[x] < rules.size() && rules[rule_[x]].name == name; }, slot);
  return k == intern_detail::Slots::kEmpty ? -1 : static_cast<int64_t>(rule_[k]);
}

void RuleNameIndex::add(const std::vector<Rule>& rules, uint32_t index) {
  const uint64_t h = name_hash(rules[index].name);
  size_t slot = 0;
  slots_.find(h, [](uint32_t) { return false; }, slot);  // the free slot that ends its probe
  slots_.add(slot, h);
  rule_.push_back(index);
}

int64_t Grammar::find_rule(std::string_view name) const {
  if (const int64_t found = names.find(rules, name); found >= 0) return found;
  if (names.added() == rules.size()) return -1;  // the index covers every rule
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

uint32_t Grammar::add_rule(std::string name, Expr body, SourceLocation where, bool no_inline) {
  validated = false;
  const auto index = static_cast<uint32_t>(rules.size());
  if (find_rule(name) >= 0) throw GrammarError(where, fmt::format("rule '{}' is defined twice", name));
  rules.push_back(Rule{std::move(name), std::move(body), where, no_inline});
  names.add(rules, index);
  return index;
}

namespace {

void shift_rule_refs(Expr& e, uint32_t offset) {
  if (e.kind == Expr::Kind::kRuleRef) e.rule += offset;
  for (Expr& c : e.children) shift_rule_refs(c, offset);
}

}  // namespace

uint32_t append_grammar(Grammar& into, const Grammar& from, std::string_view prefix) {
  const auto offset = static_cast<uint32_t>(into.rules.size());
  for (const Rule& r : from.rules) {
    Expr body = r.body;
    shift_rule_refs(body, offset);
    const uint32_t added = into.add_rule(std::string(prefix) + r.name, std::move(body), r.where, r.no_inline);
    into.rules[added].tail_merged = r.tail_merged;
  }
  return from.root + offset;
}

// ---------------------------------------------------------------------------------
// validate

namespace {

template <typename F>
void for_each_ref(const Expr& e, const F& f) {
  if (e.kind == Expr::Kind::kRuleRef) f(e);
  for (const auto& c : e.children) for_each_ref(c, f);
}

}  // namespace

void validate(Grammar& g) {
  if (g.rules.empty()) throw GrammarError("the grammar has no rules");
  if (g.root >= g.rules.size()) throw GrammarError("the grammar's root rule is missing");
  if (g.validated) return;
  // One walk tells productivity and whether any reference is out of range; only then are
  // the bodies searched for the first such reference, to name it.
  bool bad_refs = false;
  const std::vector<char> productive = productive_rules(g, nullptr, &bad_refs);
  if (bad_refs) {
    for (const auto& rule : g.rules) {
      for_each_ref(rule.body, [&](const Expr& ref) {
        if (ref.rule >= g.rules.size()) {
          throw GrammarError(ref.where, fmt::format("rule '{}' refers to a rule that does not exist",
                                                    rule.name));
        }
      });
    }
  }
  if (!productive[g.root]) {
    // Name a rule at the bottom of the failure: one whose unproductive references all lead
    // back to it (its own cycle), not a rule that merely uses it.
    const Rule& bad = g.rules[bottom_unproductive_rule(g, productive)];
    throw GrammarError(
        bad.where,
        fmt::format("rule '{}' can never match: every alternative needs an empty character "
                    "class or a rule that never completes (e.g. unbounded self-recursion)",
                    bad.name));
  }
  // The root can do without the others: their alternatives are dropped, with a warning.
  g.validated = true;
  if (std::all_of(productive.begin(), productive.end(), [](char p) { return p != 0; })) return;
  const std::vector<char> reachable = reachable_rules(g);
  for (uint32_t i = 0; i < g.rules.size(); ++i) {
    if (!reachable[i] || productive[i]) continue;
    GrammarWarning w{g.rules[i].where, g.rules[i].name,
                     fmt::format("rule '{}' can never finish (no finite sentence); the alternatives "
                                 "that need it are dropped",
                                 g.rules[i].name)};
    const bool known = std::any_of(g.warnings.begin(), g.warnings.end(), [&](const GrammarWarning& x) {
      return x.rule == w.rule && x.message == w.message;
    });
    if (!known) g.warnings.push_back(std::move(w));
  }
}

// ---------------------------------------------------------------------------------
// prune_unproductive

namespace {

Expr never_expr() { return Expr::char_class({}); }
bool is_never(const Expr& e) { return e.kind == Expr::Kind::kCharClass && e.ranges.empty(); }

Expr prune_expr(const Expr& e, const std::vector<char>& productive) {
  switch (e.kind) {
    case Expr::Kind::kRuleRef:
      return productive[e.rule] ? e : never_expr();
    case Expr::Kind::kAutomaton:
      return e.automaton && !e.automaton->empty() ? e : never_expr();
    case Expr::Kind::kSequence: {
      std::vector<Expr> kids;
      for (const auto& c : e.children) {
        Expr k = prune_expr(c, productive);
        if (is_never(k)) return never_expr();
        kids.push_back(std::move(k));
      }
      return Expr::sequence(std::move(kids));
    }
    case Expr::Kind::kChoice: {
      std::vector<Expr> kids;
      for (const auto& c : e.children) {
        Expr k = prune_expr(c, productive);
        if (!is_never(k)) kids.push_back(std::move(k));
      }
      return kids.empty() ? never_expr() : Expr::choice(std::move(kids));
    }
    case Expr::Kind::kRepeat: {
      Expr k = prune_expr(e.children[0], productive);
      if (is_never(k)) return e.min == 0 ? Expr::empty() : never_expr();
      return Expr::repeat(std::move(k), e.min, e.max);
    }
    case Expr::Kind::kMachine: {
      // An element that derives nothing stays, its moves never taken; the walk is never when
      // no walk is left.
      Expr out = e;
      for (auto& c : out.children) c = prune_expr(c, productive);
      const auto usable = [&](uint32_t el) { return !is_never(out.children[1 + el]); };
      return out.machine->has_walk(usable, !is_never(out.children[0])) ? out : never_expr();
    }
    default:
      return e;
  }
}

// Whether prune_expr would change `e`: it holds a reference to an unproductive rule, an
// empty automaton or an empty character class. Most bodies hold none and are kept as they
// are (rebuilding every body copied the whole grammar).
bool needs_pruning(const Expr& e, const std::vector<char>& productive) {
  switch (e.kind) {
    case Expr::Kind::kRuleRef:
      return !productive[e.rule];
    case Expr::Kind::kAutomaton:
      return !e.automaton || e.automaton->empty();
    case Expr::Kind::kCharClass:
      return e.ranges.empty();
    default:
      break;
  }
  for (const auto& c : e.children) {
    if (needs_pruning(c, productive)) return true;
  }
  return false;
}

}  // namespace

void prune_unproductive(Grammar& g) {
  if (g.root >= g.rules.size()) throw GrammarError("the grammar's root rule is missing");
  bool empty_leaves = false, bad_refs = false;
  const std::vector<char> productive = productive_rules(g, &empty_leaves, &bad_refs);
  if (bad_refs) {  // validate() names the reference (pruning would read past `productive`)
    g.validated = false;
    validate(g);
  }
  if (!productive[g.root]) {
    throw GrammarError("the grammar's root can never match: its language is empty");
  }
  // Once pruned, every rule the root reaches derives a string: what validate() would find.
  g.validated = true;
  // Nothing to prune: no body refers to an unproductive rule or holds an empty leaf.
  if (!empty_leaves && std::all_of(productive.begin(), productive.end(), [](char p) { return p != 0; })) return;
  for (size_t i = 0; i < g.rules.size(); ++i) {
    if (!productive[i]) {
      g.rules[i].body = never_expr();
    } else if (needs_pruning(g.rules[i].body, productive)) {
      g.rules[i].body = prune_expr(g.rules[i].body, productive);
    }
  }
}

// ---------------------------------------------------------------------------------
// to_gbnf

namespace {

void append_escaped_codepoint(std::string& out, uint32_t cp, bool in_class) {
  switch (cp) {
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    case '\\': out += "\\\\"; return;
    case '"': out += "\\\""; return;
    default: break;
  }
  if (in_class && (cp == ']' || cp == '[' || cp == '^' || cp == '-')) {
    out += cp == ']' ? "\\]" : cp == '[' ? "\\[" : cp == '^' ? "\\^" : "\\-";
    return;
  }
  if (cp < 0x20 || cp == 0x7F) {
    out += fmt::format("\\x{:02X}", cp);
  } else if (cp >= 0x80 && cp < 0xA0) {
    out += fmt::format("\\u{:04X}", cp);
  } else {
    utf8::append(out, cp);
  }
}

void print_expr(const Expr& e, const Grammar& g, std::string& out, bool nested) {
  switch (e.kind) {
    case Expr::Kind::kEmpty:
      out += "\"\"";
      break;
    case Expr::Kind::kLiteral: {
      out += '"';
      size_t pos = 0;
      while (pos < e.bytes.size()) {
        const uint32_t cp = utf8::decode(e.bytes, pos);
        if (cp == utf8::kInvalid) {
          out += fmt::format("\\x{:02X}", static_cast<uint8_t>(e.bytes[pos]));
          ++pos;
        } else {
          append_escaped_codepoint(out, cp, false);
        }
      }
      out += '"';
      break;
    }
    case Expr::Kind::kCharClass:
      out += '[';
      for (const auto& r : e.ranges) {
        append_escaped_codepoint(out, r.lo, true);
        if (r.hi != r.lo) {
          out += '-';
          append_escaped_codepoint(out, r.hi, true);
        }
      }
      out += ']';
      break;
    case Expr::Kind::kRuleRef:
      out += g.rules[e.rule].name;
      break;
    case Expr::Kind::kAutomaton:
      // Printed as a choice over its first edges is not faithful; name it instead.
      out += fmt::format("[automaton-{}-states{}]", e.automaton->size(), e.json_string ? "-json-string" : "");
      break;
    case Expr::Kind::kMachine:
      // Its walks spelled out as an expression could be infinite or exponentially long:
      // named, with its separator and elements.
      out += fmt::format("[machine-{}-states-{}-moves ", e.machine->num_states(), e.machine->moves.size());
      for (size_t i = 0; i < e.children.size(); ++i) {
        if (i) out += i == 1 ? " : " : " | ";
        print_expr(e.children[i], g, out, true);
      }
      out += ']';
      break;
    case Expr::Kind::kSequence:
    case Expr::Kind::kChoice: {
      if (nested) out += '(';
      const char* sep = e.kind == Expr::Kind::kSequence ? " " : " | ";
      for (size_t i = 0; i < e.children.size(); ++i) {
        if (i) out += sep;
        print_expr(e.children[i], g, out, e.kind == Expr::Kind::kChoice ? false : true);
      }
      if (nested) out += ')';
      break;
    }
    case Expr::Kind::kRepeat:
      print_expr(e.children[0], g, out, true);
      if (e.min == 0 && e.max == kUnbounded) {
        out += '*';
      } else if (e.min == 1 && e.max == kUnbounded) {
        out += '+';
      } else if (e.min == 0 && e.max == 1) {
        out += '?';
      } else if (e.max == kUnbounded) {
        out += fmt::format("{{{},}}", e.min);
      } else if (e.min == e.max) {
        out += fmt::format("{{{}}}", e.min);
      } else {
        out += fmt::format("{{{},{}}}", e.min, e.max);
      }
      break;
  }
}

}  // namespace

std::string Grammar::to_gbnf() const {
  std::string out;
  auto print_rule = [&](size_t i) {
    out += rules[i].name;
    out += " ::= ";
    print_expr(rules[i].body, *this, out, false);
    out += '\n';
  };
  if (root < rules.size()) print_rule(root);
  for (size_t i = 0; i < rules.size(); ++i) {
    if (i != root) print_rule(i);
  }
  return out;
}

}  // namespace lockstep
