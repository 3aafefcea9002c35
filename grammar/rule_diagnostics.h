// grammar/rule_diagnostics.h — rules a grammar never uses and rules that can never finish.
#pragma once

#include <cstdint>
#include <vector>

#include "grammar/grammar.h"

namespace lockstep {

struct RuleDiagnostics {
  /// Rules no derivation from the root refers to (indices into Grammar::rules).
  std::vector<uint32_t> unreachable;
  /// Rules that derive no finite sentence (every expansion recurses forever or needs an
  /// empty character class): no output can complete them.
  std::vector<uint32_t> unproductive;
};

/// Both in O(grammar size × (1 + references per rule)): a worklist over the rules that refer
/// to each rule, no sweep per rule.
RuleDiagnostics diagnose_rules(const Grammar& grammar);

}  // namespace lockstep
