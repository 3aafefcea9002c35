// grammar/expr_identity.h — structural identity of expressions, for hash-consing rules.
//
// Two expressions are identical when they have the same shape, literals, code-point
// ranges, repeat bounds and automaton objects (by identity: an automaton shared by two
// places is one object), and their rule references name identical rules. Which rules are
// known to be identical is the caller's: references are read through `canon` (a rule
// whose body was found identical to an earlier one's maps to that rule). Source locations
// are ignored. Both functions cost one pass over the expressions; not thread-safe only in
// the sense that `canon` is the caller's.
#pragma once

#include <cstdint>
#include <functional>

#include "grammar/grammar.h"

namespace lockstep {

/// Maps a rule index to its representative (itself when it has none).
using RuleCanon = std::function<uint32_t(uint32_t)>;

/// A hash of `e` consistent with expr_identical (equal expressions hash equal).
uint64_t expr_hash(const Expr& e, const RuleCanon& canon);

/// True when `a` and `b` are the same expression up to rule representatives.
bool expr_identical(const Expr& a, const Expr& b, const RuleCanon& canon);

}  // namespace lockstep
