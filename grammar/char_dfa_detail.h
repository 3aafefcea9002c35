// grammar/char_dfa_detail.h — helpers shared by char_dfa.cpp and char_dfa_literals.cpp.
#pragma once

#include <vector>

#include "grammar/char_dfa.h"

namespace lockstep::char_dfa_detail {

// Appends lo..hi → target to a state's sorted edges, extending the last edge when it ends
// right before lo and has the same target (equal neighbours are one edge in every
// automaton char_dfa.cpp returns).
inline void append_edge(std::vector<CharDfa::Edge>& edges, uint32_t lo, uint32_t hi, uint32_t target) {
  if (!edges.empty() && edges.back().target == target && edges.back().hi + 1 == lo) {
    edges.back().hi = hi;
  } else {
    edges.push_back({lo, hi, target});
  }
}

inline void check_limit(size_t n) {
  if (n > CharDfa::max_states()) {
    throw AutomatonLimitError({}, "string_automaton_states", CharDfa::max_states(),
                              "the automaton of a string or number constraint");
  }
}

}  // namespace lockstep::char_dfa_detail
