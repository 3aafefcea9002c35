// grammar/whitespace_bound.cpp — generation's bound on runs of whitespace in grammars
// (bound_whitespace_rules in grammar.h; docs/generation.md).
#include <functional>
#include <memory>

#include "grammar/char_dfa.h"
#include "grammar/grammar.h"

namespace lockstep {

namespace {

constexpr uint64_t kInfinite = UINT64_MAX;

bool whitespace(uint32_t cp) { return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r'; }

bool whitespace_ranges(const std::vector<CodepointRange>& ranges) {
  for (const auto& r : ranges) {
    if (r.hi - r.lo > 4) return false;
    for (uint32_t cp = r.lo; cp <= r.hi; ++cp) {
      if (!whitespace(cp)) return false;
    }
  }
  return true;
}

// Only whitespace terminals, and references to rules marked in `ws`.
bool whitespace_only(const Expr& e, const std::vector<char>& ws) {
  switch (e.kind) {
    case Expr::Kind::kEmpty: return true;
    case Expr::Kind::kLiteral:
      for (char c : e.bytes) {
        if (!whitespace(static_cast<unsigned char>(c))) return false;
      }
      return true;
    case Expr::Kind::kCharClass: return whitespace_ranges(e.ranges);
    case Expr::Kind::kRuleRef: return ws[e.rule] != 0;
    case Expr::Kind::kAutomaton:
      if (e.json_string) return false;
      for (const auto& s : e.automaton->states()) {
        for (const auto& edge : s.edges) {
          if (!whitespace_ranges({{edge.lo, edge.hi}})) return false;
        }
      }
      return true;
    default:
      for (const auto& c : e.children) {
        if (!whitespace_only(c, ws)) return false;
      }
      return true;
  }
}

// True when some path of `d` from its start can loop (its language is infinite, as d has
// no dead states once minimized).
bool has_cycle(const CharDfa& d) {
  std::vector<uint8_t> mark(d.size(), 0);  // 1: on the path, 2: done
  std::function<bool(uint32_t)> visit = [&](uint32_t q) {
    mark[q] = 1;
    for (const auto& e : d.states()[q].edges) {
      if (mark[e.target] == 1 || (mark[e.target] == 0 && visit(e.target))) return true;
    }
    mark[q] = 2;
    return false;
  };
  return visit(0);
}

class Bounder {
 public:
  explicit Bounder(const Grammar& g) : g_(g), longest_(g.rules.size(), 0), state_(g.rules.size(), 0) {}

  // The longest string of a whitespace-only rule (kInfinite when unbounded; recursion
  // counts as unbounded).
  uint64_t longest_rule(uint32_t r) {
    if (state_[r] == 2) return longest_[r];
    if (state_[r] == 1) return kInfinite;
    state_[r] = 1;
    longest_[r] = longest(g_.rules[r].body);
    state_[r] = 2;
    return longest_[r];
  }

 private:
  uint64_t longest(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kEmpty: return 0;
      case Expr::Kind::kLiteral: return e.bytes.size();
      case Expr::Kind::kCharClass: return 1;
      case Expr::Kind::kRuleRef: return longest_rule(e.rule);
      case Expr::Kind::kAutomaton: {
        const CharDfa d = e.automaton->minimized();
        return d.empty() ? 0 : has_cycle(d) ? kInfinite : d.size();  // an upper bound when finite
      }
      case Expr::Kind::kSequence: {
        uint64_t n = 0;
        for (const auto& c : e.children) {
          const uint64_t k = longest(c);
          if (k == kInfinite) return kInfinite;
          n += k;
        }
        return n;
      }
      case Expr::Kind::kChoice: {
        uint64_t n = 0;
        for (const auto& c : e.children) n = std::max(n, longest(c));
        return n;
      }
      case Expr::Kind::kMachine:
        return kInfinite;  // an upper bound (a front end's machine is never whitespace)
      case Expr::Kind::kRepeat: {
        const uint64_t k = longest(e.children[0]);
        if (k == 0 || e.max == 0) return 0;
        if (k == kInfinite || e.max == kUnbounded) return kInfinite;
        return k * e.max;
      }
    }
    return kInfinite;
  }

  const Grammar& g_;
  std::vector<uint64_t> longest_;
  std::vector<uint8_t> state_;
};

// `e` with every rule reference replaced by that rule's current automaton.
Expr substitute(const Expr& e, const std::vector<std::shared_ptr<const CharDfa>>& dfa) {
  if (e.kind == Expr::Kind::kRuleRef) return automaton_expr(dfa[e.rule], false);
  Expr out = e;
  for (auto& c : out.children) c = substitute(c, dfa);
  return out;
}

}  // namespace

std::vector<std::string> bound_whitespace_rules(Grammar& g, uint32_t max_run) {
  const size_t n = g.rules.size();
  // Whitespace-only rules: the greatest set closed under "only whitespace terminals and
  // references into the set".
  std::vector<char> ws(n, 1);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < n; ++r) {
      if (ws[r] && !whitespace_only(g.rules[r].body, ws)) ws[r] = 0, changed = true;
    }
  }
  Bounder bounder(g);
  std::vector<uint32_t> unbounded;
  for (uint32_t r = 0; r < n; ++r) {
    if (ws[r] && bounder.longest_rule(r) == kInfinite) unbounded.push_back(r);
  }
  if (unbounded.empty()) return {};
  // Each whitespace rule's strings of at most max_run characters: the least fixed point of
  // the rules' equations within that length, by Kleene iteration (every set is finite, so
  // it ends).
  std::vector<std::shared_ptr<const CharDfa>> dfa(n, std::make_shared<const CharDfa>(CharDfa::none()));
  auto bounded = [&](uint32_t limit) {
    const CharDfa within = CharDfa::length(0, limit);
    std::fill(dfa.begin(), dfa.end(), std::make_shared<const CharDfa>(CharDfa::none()));
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t r = 0; r < n; ++r) {
        if (!ws[r]) continue;
        auto next = std::make_shared<const CharDfa>(
            CharDfa::intersect(CharDfa::from_expr(substitute(g.rules[r].body, dfa)), within));
        if (!CharDfa::intersect(*next, dfa[r]->complement()).empty()) {
          dfa[r] = std::move(next);
          changed = true;
        }
      }
    }
  };
  bounded(max_run);
  std::vector<std::string> names;
  for (const uint32_t r : unbounded) {
    std::shared_ptr<const CharDfa> d = dfa[r];
    if (d->empty()) {
      // The rule's shortest strings are longer than max_run: keep those (a rule that needs
      // more whitespace than the bound still gets its minimum).
      for (uint32_t limit = max_run + 1; d->empty() && limit <= max_run + 64; ++limit) {
        bounded(limit);
        d = dfa[r];
      }
      bounded(max_run);
      if (d->empty()) continue;
    }
    g.rules[r].body = automaton_expr(d, false);
    g.validated = false;
    names.push_back(g.rules[r].name);
  }
  return names;
}

}  // namespace lockstep
