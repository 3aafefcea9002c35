// grammar/diagnostics.h — which rules of a grammar can finish and which the root can reach,
// computed in time linear in the grammar's size (100,000-rule chains included).
//
// A rule is *productive* when it derives some finite string (`loop ::= "b" loop` does not),
// *reachable* when the root's body refers to it, directly or through other rules. validate()
// (grammar.h) uses these: an unproductive rule the root can do without is a warning, a root
// that derives nothing an error; `lockstep fuzz` lists both kinds with diagnose_rules().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grammar/grammar.h"

namespace lockstep {

/// Per rule (indexed like grammar.rules): 1 when the rule derives some finite string.
/// Linear in the number of expression nodes. A reference out of range never completes;
/// with `bad_refs`, tells whether there is one. With `empty_leaves`, also tells whether any
/// body holds an empty character class or an empty automaton (prune_unproductive has
/// nothing to do when there is none and every rule is productive).
std::vector<char> productive_rules(const Grammar& grammar, bool* empty_leaves = nullptr, bool* bad_refs = nullptr);

/// Per rule: 1 when the root refers to it, directly or through other rules (the root
/// itself included). References out of range are ignored. Linear.
std::vector<char> reachable_rules(const Grammar& grammar);

/// One rule a diagnostic is about.
struct RuleDiagnostic {
  uint32_t rule = 0;
  std::string name;
  SourceLocation where;  ///< the rule's definition (line 0 when the front end gave none)
};

struct GrammarDiagnostics {
  std::vector<RuleDiagnostic> unreachable;   ///< rules the root never refers to
  std::vector<RuleDiagnostic> unproductive;  ///< rules that derive no finite string (reachable or not)
};

/// Lists the unreachable and the unproductive rules, in rule order. Never throws for a
/// grammar whose references are in range (out-of-range references count as unproductive).
GrammarDiagnostics diagnose_rules(const Grammar& grammar);

/// Among the rules the root reaches through references to unproductive rules, one at the
/// bottom of the failure: a rule whose unproductive references all lead back to it (its own
/// cycle, or none), lowest index first. Requires the root to be unproductive. Linear.
uint32_t bottom_unproductive_rule(const Grammar& grammar, const std::vector<char>& productive);

}  // namespace lockstep
