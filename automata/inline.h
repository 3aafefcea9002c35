// automata/inline.h — rule inlining, an optimization of the grammar IR before compilation.
#pragma once

#include <cstddef>

#include "grammar/grammar.h"

namespace lockstep {

struct InlineLimits {
  /// Rules whose (already inlined) body expands into more automaton states than this stay
  /// separate rules: copying them into every caller would multiply states.
  size_t max_rule_size = 256;
  /// The same bound for a rule referenced only once (inlining it copies nothing).
  size_t max_single_use_size = 4096;
  /// States inlining may add to one rule's body.
  size_t max_body_size = 20000;
};

/// The same language with every non-recursive rule (other than the root) substituted into
/// the bodies that reference it, within the size limits. Rules keep their indices;
/// rules no longer referenced stay in the grammar (the compiler skips unreachable rules).
Grammar inline_rules(const Grammar& grammar, const InlineLimits& limits = {});

}  // namespace lockstep
