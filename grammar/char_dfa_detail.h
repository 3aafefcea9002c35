// grammar/char_dfa_detail.h — helpers shared by char_dfa.cpp and char_dfa_literals.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "grammar/char_dfa.h"
#include "grammar/hash.h"

namespace lockstep::char_dfa_detail {

// Appends lo..hi → target to a state's sorted edges, extending the last edge when it ends
// right before lo and has the same target (equal neighbours are one edge in every
// automaton char_dfa.cpp returns).
inline void append_edge(CharDfa::Edges& edges, uint32_t lo, uint32_t hi, uint32_t target) {
  if (!edges.empty() && edges.back().target == target && edges.back().hi + 1 == lo) {
    edges.back().hi = hi;
  } else {
    edges.push_back({lo, hi, target});
  }
}

// Appends lo..hi → class `c` to a state's signature (its finality, then (lo, hi, class)
// triples), extending the last triple when it ends right before lo and has the same class:
// equal states then have equal signatures whatever ranges their edges were split into.
inline void append_class_edge(std::vector<uint32_t>& key, uint32_t lo, uint32_t hi, uint32_t c) {
  const size_t k = key.size();
  if (k > 1 && key[k - 1] == c && key[k - 2] + 1 == lo) {
    key[k - 2] = hi;
  } else {
    key.insert(key.end(), {lo, hi, c});
  }
}

inline void check_limit(size_t n) {
  if (n > CharDfa::max_states()) {
    throw AutomatonLimitError({}, "string_automaton_states", CharDfa::max_states(),
                              "the automaton of a string or number constraint");
  }
}

// check_limit(), then a product's own budget: `n` product states before minimization.
inline void check_product_limit(size_t n, size_t max_states) {
  check_limit(n);
  if (n > max_states) throw AutomatonLimitError({}, "string_automaton_states", max_states, "an automaton product");
}

}  // namespace lockstep::char_dfa_detail
