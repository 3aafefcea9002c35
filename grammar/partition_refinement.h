// grammar/partition_refinement.h — DFA minimization by partition refinement in
// O(m log n) (m transitions, n states).
//
// The algorithm is Valmari and Lehtinen's refinement of Hopcroft's (A. Valmari, P.
// Lehtinen, "Efficient minimization of DFAs with partial transition functions", STACS
// 2008; A. Valmari, "Fast brief practical DFA minimization", IPL 112(6), 2012): states and
// transitions are both kept as refinable partitions, and a split only ever processes the
// smaller half. Transitions may be partial. Moore's round-by-round refinement, which this
// replaces, needs as many rounds as the longest chain of distinguishable states: quadratic
// for the length counters of JSON Schema's minLength / maxLength. Asked to, Moore's rounds
// still go first while each splits many classes: a round is one pass in memory order, where
// the refinement's marking jumps through memory, so the automata of numbers (products of
// multipleOf conditions, settled in a handful of rounds) are minimized faster than by the
// refinement alone; what the rounds leave unsettled goes on from their partition.
#pragma once

#include <cstdint>
#include <vector>

namespace lockstep {

struct LabeledTransition {
  uint32_t tail;   ///< source state
  uint32_t label;  ///< any integer; transitions out of one state have distinct labels
  uint32_t head;   ///< target state
};

/// The coarsest partition of states [0, n) that refines `initial_block` (states with
/// different initial blocks, e.g. final and non-final, stay apart) and is compatible with
/// `transitions`: two states share a block exactly when, for every label, both have no
/// transition or both go to the same block. Returns the block of each state, numbered
/// 0, 1, … in order of first appearance by state index.
/// When at least half the states are reached by no cycle, those are classed from the ends
/// backwards by their initial block and their (label, class of the target) pairs, in time
/// linear in the transitions (Revuz, "Minimisation of acyclic deterministic automata in
/// linear time", 1992), and only the others (on or after a cycle) are refined: a grammar's
/// automaton is mostly acyclic (an object's members, one rule per set of properties read).
/// With `rounds_first`, Moore's rounds go first in the refinement where states average 4
/// transitions or more (code-point automata of numbers); the grammar's automata, whose masks
/// are classed from the result, keep the refinement alone.
std::vector<uint32_t> coarsest_partition(uint32_t n, const std::vector<uint32_t>& initial_block,
                                         std::vector<LabeledTransition> transitions, bool rounds_first = false);

}  // namespace lockstep
