#include "grammar/expr_identity.h"

#include "grammar/hash.h"

namespace lockstep {

uint64_t expr_hash(const Expr& e, const RuleCanon& canon) {
  uint64_t h = fnv1a_step(kFnvOffsetBasis, static_cast<uint64_t>(e.kind) + 1);
  switch (e.kind) {
    case Expr::Kind::kEmpty:
      break;
    case Expr::Kind::kLiteral:
      h = fnv1a_step(h, std::hash<std::string>{}(e.bytes));
      break;
    case Expr::Kind::kCharClass:
      for (const auto& r : e.ranges) h = fnv1a_step(fnv1a_step(h, r.lo), r.hi);
      break;
    case Expr::Kind::kRuleRef:
      h = fnv1a_step(h, canon(e.rule));
      break;
    case Expr::Kind::kRepeat:
      h = fnv1a_step(fnv1a_step(h, e.min), e.max);
      break;
    case Expr::Kind::kAutomaton:
      h = fnv1a_step(fnv1a_step(h, reinterpret_cast<uintptr_t>(e.automaton.get())), e.json_string);
      break;
    case Expr::Kind::kMachine:
      h = fnv1a_step(h, reinterpret_cast<uintptr_t>(e.machine.get()));
      break;
    case Expr::Kind::kSequence:
    case Expr::Kind::kChoice:
      h = fnv1a_step(h, e.children.size());
      break;
  }
  for (const auto& c : e.children) h = fnv1a_step(h, expr_hash(c, canon));
  return h;
}

bool expr_identical(const Expr& a, const Expr& b, const RuleCanon& canon) {
  if (a.kind != b.kind || a.children.size() != b.children.size()) return false;
  switch (a.kind) {
    case Expr::Kind::kEmpty:
    case Expr::Kind::kSequence:
    case Expr::Kind::kChoice:
      break;
    case Expr::Kind::kLiteral:
      if (a.bytes != b.bytes) return false;
      break;
    case Expr::Kind::kCharClass:
      if (a.ranges != b.ranges) return false;
      break;
    case Expr::Kind::kRuleRef:
      if (canon(a.rule) != canon(b.rule)) return false;
      break;
    case Expr::Kind::kRepeat:
      if (a.min != b.min || a.max != b.max) return false;
      break;
    case Expr::Kind::kAutomaton:
      if (a.automaton != b.automaton || a.json_string != b.json_string) return false;
      break;
    case Expr::Kind::kMachine:
      if (a.machine != b.machine) return false;
      break;
  }
  for (size_t i = 0; i < a.children.size(); ++i) {
    if (!expr_identical(a.children[i], b.children[i], canon)) return false;
  }
  return true;
}

}  // namespace lockstep
