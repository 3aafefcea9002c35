// grammar/char_dfa_length.cpp — a language cut to a range of lengths (see char_dfa.h,
// CharDfa::intersect with a length(): `pattern` or `format` beside `maxLength`).
//
// The product of an automaton with a length counter pairs each of its states with the
// number of code points read, so the pairs fall into layers, one per length, and every edge
// leads from one layer to the next: the product is acyclic. It is therefore built layer by
// layer (each layer a list of the automaton's states, no table of pairs) and minimized
// bottom-up as an acyclic automaton is (Revuz, "Minimisation of acyclic deterministic
// automata in linear time", TCS 1992): from the last layer to the first, a pair's class is
// its finality and the classes its edges lead to, adjacent ranges to one class merged, and
// pairs with the same signature are one state. The generic product minimized acyclic
// products by the same hashing, but only after building them through a table of pairs and
// finding their live states: on an e-mail address's automaton with `maxLength: 255` (28,000
// states) that took 37 ms, this 8 ms.
#include <algorithm>
#include <vector>

#include "grammar/char_dfa.h"
#include "grammar/char_dfa_detail.h"
#include "grammar/hash.h"
#include "grammar/intern_table.h"

namespace lockstep {

namespace {

constexpr uint32_t kDead = UINT32_MAX;

}  // namespace

CharDfa CharDfa::with_length(const CharDfa& a, uint32_t min, uint32_t max, size_t max_states) {
  if (max == kUnbounded) throw std::logic_error("CharDfa::with_length needs a finite maximum length");
  if (min > max) return none();
  if (a.chainless_) {
    return length_range(std::max(a.length_->first, min), std::min(a.length_->second, max));
  }
  const std::vector<State>& states = a.states_;
  // layers[begin[n] .. begin[n + 1]): the states of `a` reached after exactly n code points.
  std::vector<uint32_t> layers{0}, begin{0, 1};
  std::vector<uint32_t> in_layer(states.size(), kDead);  // the last layer each state was put in
  in_layer[0] = 0;
  for (uint32_t n = 0; n < max && begin[n] < begin[n + 1]; ++n) {
    for (uint32_t i = begin[n]; i < begin[n + 1]; ++i) {
      for (const Edge& e : states[layers[i]].edges) {
        if (in_layer[e.target] == n + 1) continue;
        in_layer[e.target] = n + 1;
        layers.push_back(e.target);
      }
    }
    begin.push_back(static_cast<uint32_t>(layers.size()));
    char_dfa_detail::check_product_limit(layers.size(), max_states);
  }
  const auto last = static_cast<uint32_t>(begin.size() - 2);  // the deepest layer (it may be empty)
  // Bottom-up: the class of each layer entry; class_next holds the classes of layer n + 1 by
  // state of `a` (every edge of layer n leads into it).
  SeqInternTable<> classes;
  std::vector<uint32_t> entry_class(layers.size()), class_next(states.size(), kDead), class_here(states.size(), kDead);
  std::vector<uint32_t> key;
  for (uint32_t n = last + 1; n-- > 0;) {
    for (uint32_t i = begin[n]; i < begin[n + 1]; ++i) {
      const State& st = states[layers[i]];
      key.assign(1, st.final && n >= min ? 1u : 0u);
      if (n < max) {
        for (const Edge& e : st.edges) {
          const uint32_t t = class_next[e.target];
          if (t != kDead) char_dfa_detail::append_class_edge(key, e.lo, e.hi, t);
        }
      }
      const uint32_t c = key.size() == 1 && key[0] == 0 ? kDead : classes.intern(key).first;
      entry_class[i] = c;
      class_here[layers[i]] = c;
    }
    std::swap(class_here, class_next);
  }
  if (entry_class[0] == kDead) return none();
  // Classes numbered by first appearance, layer by layer (the start's first, as minimized()
  // numbers the generic product's).
  std::vector<uint32_t> id(classes.size(), kDead), order;
  for (const uint32_t c : entry_class) {
    if (c != kDead && id[c] == kDead) id[c] = static_cast<uint32_t>(order.size()), order.push_back(c);
  }
  CharDfa out;
  out.states_.resize(order.size());
  for (uint32_t s = 0; s < order.size(); ++s) {
    const std::span<const uint32_t> k = classes.key(order[s]);
    out.states_[s].final = k[0] != 0;
    for (size_t j = 1; j + 2 < k.size(); j += 3) out.states_[s].edges.push_back({k[j], k[j + 1], id[k[j + 2]]});
  }
  out.minimal_ = true;
  return out;
}

}  // namespace lockstep
