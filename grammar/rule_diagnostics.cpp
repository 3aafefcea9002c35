// grammar/rule_diagnostics.cpp — see rule_diagnostics.h.
#include "grammar/rule_diagnostics.h"

#include "grammar/char_dfa.h"

namespace lockstep {

namespace {

void references(const Expr& e, std::vector<uint32_t>& out) {
  if (e.kind == Expr::Kind::kRuleRef) out.push_back(e.rule);
  for (const auto& c : e.children) references(c, out);
}

bool productive(const Expr& e, const std::vector<uint8_t>& done) {
  switch (e.kind) {
    case Expr::Kind::kEmpty:
    case Expr::Kind::kLiteral: return true;
    case Expr::Kind::kCharClass: return !e.ranges.empty();
    case Expr::Kind::kAutomaton: return e.automaton && !e.automaton->empty();
    case Expr::Kind::kRuleRef: return e.rule < done.size() && done[e.rule];
    case Expr::Kind::kSequence:
      for (const auto& c : e.children) {
        if (!productive(c, done)) return false;
      }
      return true;
    case Expr::Kind::kChoice:
      for (const auto& c : e.children) {
        if (productive(c, done)) return true;
      }
      return false;
    case Expr::Kind::kRepeat: return e.min == 0 || productive(e.children[0], done);
  }
  return false;
}

}  // namespace

RuleDiagnostics diagnose_rules(const Grammar& g) {
  const size_t n = g.rules.size();
  std::vector<std::vector<uint32_t>> refs(n), callers(n);
  for (uint32_t r = 0; r < n; ++r) {
    references(g.rules[r].body, refs[r]);
    for (uint32_t to : refs[r]) {
      if (to < n) callers[to].push_back(r);
    }
  }
  RuleDiagnostics out;
  // Reachability from the root.
  std::vector<uint8_t> seen(n, 0);
  std::vector<uint32_t> stack;
  if (g.root < n) {
    seen[g.root] = 1;
    stack.push_back(g.root);
  }
  while (!stack.empty()) {
    const uint32_t r = stack.back();
    stack.pop_back();
    for (uint32_t to : refs[r]) {
      if (to < n && !seen[to]) {
        seen[to] = 1;
        stack.push_back(to);
      }
    }
  }
  // Productivity: a rule is re-examined only when a rule it refers to becomes productive.
  std::vector<uint8_t> done(n, 0);
  for (uint32_t r = 0; r < n; ++r) {
    if (productive(g.rules[r].body, done)) {
      done[r] = 1;
      stack.push_back(r);
    }
  }
  while (!stack.empty()) {
    const uint32_t r = stack.back();
    stack.pop_back();
    for (uint32_t caller : callers[r]) {
      if (!done[caller] && productive(g.rules[caller].body, done)) {
        done[caller] = 1;
        stack.push_back(caller);
      }
    }
  }
  for (uint32_t r = 0; r < n; ++r) {
    if (!seen[r]) out.unreachable.push_back(r);
    if (!done[r]) out.unproductive.push_back(r);
  }
  return out;
}

}  // namespace lockstep
