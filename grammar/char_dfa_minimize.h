// grammar/char_dfa_minimize.h — minimization of code-point automata (internal to
// char_dfa.cpp): dead states found backwards from the final ones, the acyclic part classed
// from the ends (Revuz), the part on or after a cycle by Moore's rounds when small, else by
// partition refinement (partition_refinement.h). Written once over a view of the states: a
// CharDfa's own (StateList) or states sharing one vector of edges (PooledView).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "grammar/char_dfa.h"
#include "grammar/char_dfa_detail.h"
#include "grammar/hash.h"
#include "grammar/partition_refinement.h"

namespace lockstep::char_dfa_detail {

// States to minimize, by index: their edges (sorted, disjoint) and finality. A CharDfa's own
// states, or states whose edges share one vector (CharDfa::PooledStates: one allocation for
// all edges, where a state of more than CharDfa::kInlineEdges edges has one of its own; the
// product of two number automata reads ten digits a state, to as many targets).
struct StateList {
  const std::vector<CharDfa::State>& states;
  size_t size() const { return states.size(); }
  std::span<const CharDfa::Edge> edges_of(uint32_t s) const { return {states[s].edges.data(), states[s].edges.size()}; }
  bool is_final(uint32_t s) const { return states[s].final; }
};

// CharDfa::PooledStates as a view.
struct PooledView {
  const CharDfa::PooledStates& p;
  size_t size() const { return p.final.size(); }
  std::span<const CharDfa::Edge> edges_of(uint32_t s) const { return {p.edges.data() + p.first[s], p.edges.data() + p.past[s]}; }
  bool is_final(uint32_t s) const { return p.final[s]; }
};

// Each state's predecessors, one entry per edge: those of state t are
// from[begin[t], begin[t + 1]) (flat arrays: an automaton product has tens of thousands of
// states, and a vector per state cost more than the walk over them).
struct Predecessors {
  std::vector<uint32_t> begin, from;
  std::span<const uint32_t> of(uint32_t t) const { return {from.data() + begin[t], from.data() + begin[t + 1]}; }
};

// Which states reach a final state (following edges backwards from the final ones);
// `preds` gets each state's predecessors.
template <class View>
std::vector<char> live_states(const View& states, Predecessors& preds) {
  const size_t n = states.size();
  preds.begin.assign(n + 1, 0);
  for (uint32_t s = 0; s < n; ++s) {
    for (const auto& e : states.edges_of(s)) ++preds.begin[e.target + 1];
  }
  for (size_t t = 0; t < n; ++t) preds.begin[t + 1] += preds.begin[t];
  preds.from.resize(preds.begin[n]);
  {
    std::vector<uint32_t> fill(preds.begin.begin(), preds.begin.end() - 1);
    for (uint32_t s = 0; s < n; ++s) {
      for (const auto& e : states.edges_of(s)) preds.from[fill[e.target]++] = s;
    }
  }
  std::vector<char> live(n, 0);
  std::vector<uint32_t> stack;
  for (uint32_t s = 0; s < n; ++s) {
    if (states.is_final(s)) live[s] = 1, stack.push_back(s);
  }
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    for (const uint32_t p : preds.of(s)) {
      if (!live[p]) live[p] = 1, stack.push_back(p);
    }
  }
  return live;
}

// The live states reachable from a cycle of live states (a loop included): those a
// topological order of the live part (Kahn's algorithm) never takes. Closed under live
// successors.
template <class View>
std::vector<char> after_cycles(const View& states, const std::vector<char>& live) {
  const auto n = static_cast<uint32_t>(states.size());
  std::vector<uint32_t> indegree(n, 0), ready;
  for (uint32_t s = 0; s < n; ++s) {
    if (!live[s]) continue;
    for (const auto& e : states.edges_of(s)) indegree[e.target] += live[e.target] ? 1 : 0;
  }
  for (uint32_t s = 0; s < n; ++s) {
    if (live[s] && indegree[s] == 0) ready.push_back(s);
  }
  while (!ready.empty()) {
    const uint32_t s = ready.back();
    ready.pop_back();
    for (const auto& e : states.edges_of(s)) {
      if (live[e.target] && --indegree[e.target] == 0) ready.push_back(e.target);
    }
  }
  std::vector<char> core(n, 0);
  for (uint32_t s = 0; s < n; ++s) core[s] = live[s] && indegree[s] > 0;
  return core;
}

template <class View>
std::vector<uint32_t> refined_classes(const View& states, const std::vector<char>& live, size_t live_count);

// The language classes of the states (dead states share one class of their own).
//
// The live states reachable from a cycle (the core: a number's exponent digits, a trailing
// run of zeros) are classed by partition refinement among themselves; they reach no other
// state. The rest has no cycle and is settled from the ends backwards, each state once all
// its live targets are: Revuz's minimization of acyclic automata (Revuz 1992,
// "Minimisation of acyclic deterministic automata in linear time"). A state's class is that
// of any settled state, or of any core class, with the same finality and the same edges to
// classes (adjacent ranges to one class merged), so equal languages meet in one hash table,
// in time linear in the edges. A length-bounded string (a pattern or a format under
// maxLength) has no core; the numbers of an enum have a small one behind tens of thousands
// of states; on either, the refinement's labels (the code-point intervals no edge boundary
// separates) would multiply the edges several times over.
template <class View>
std::vector<uint32_t> language_classes(const View& states, const std::vector<char>& live,
                                       const Predecessors& preds) {
  const auto n = static_cast<uint32_t>(states.size());
  const std::vector<char> core = after_cycles(states, live);
  uint32_t core_count = 0, rest_count = 0;
  for (uint32_t s = 0; s < n; ++s) {
    core_count += core[s] ? 1 : 0;
    rest_count += live[s] && !core[s] ? 1 : 0;
  }
  if (rest_count == 0) return refined_classes(states, live, core_count);  // every live state is in the core
  constexpr uint32_t kUnsettled = UINT32_MAX;
  std::vector<uint32_t> cls(n, kUnsettled);
  uint32_t next_class = 0;
  if (core_count > 0) {
    const std::vector<uint32_t> core_classes = refined_classes(states, core, core_count);
    for (uint32_t s = 0; s < n; ++s) {
      if (!core[s]) continue;
      cls[s] = core_classes[s];
      next_class = std::max(next_class, cls[s] + 1);
    }
  }
  // The classes' keys (finality, then lo, hi, class per merged edge), one after another in
  // `keys`; an open-addressing table of entries by key hash.
  std::vector<uint32_t> keys, key_begin{0}, key_class;
  std::vector<uint64_t> key_hash;
  size_t table_size = 16;
  while (table_size < 2 * size_t{rest_count + core_count}) table_size *= 2;
  std::vector<uint32_t> table(table_size, kUnsettled);
  const size_t mask = table_size - 1;
  std::vector<uint32_t> key;
  // The class of the key of state s: an existing one, else `fresh` (kUnsettled: a new one).
  auto class_of_key = [&](uint32_t s, uint32_t fresh) {
    key.assign(1, states.is_final(s) ? 1u : 0u);
    for (const auto& e : states.edges_of(s)) {
      if (!live[e.target]) continue;
      char_dfa_detail::append_class_edge(key, e.lo, e.hi, cls[e.target]);
    }
    const uint64_t h = fnv1a_u32(key, kFnvOffsetBasis ^ key.size());
    for (size_t i = static_cast<size_t>(mix64(h) >> 32) & mask;; i = (i + 1) & mask) {
      const uint32_t entry = table[i];
      if (entry == kUnsettled) {
        table[i] = static_cast<uint32_t>(key_hash.size());
        key_hash.push_back(h);
        keys.insert(keys.end(), key.begin(), key.end());
        key_begin.push_back(static_cast<uint32_t>(keys.size()));
        key_class.push_back(fresh == kUnsettled ? next_class++ : fresh);
        return key_class.back();
      }
      if (key_hash[entry] == h && std::equal(key.begin(), key.end(), keys.begin() + key_begin[entry],
                                             keys.begin() + key_begin[entry + 1])) {
        return key_class[entry];
      }
    }
  };
  // Each core class's key, from one of its states (all have the same: the classes are exact).
  if (core_count > 0) {
    std::vector<char> keyed(next_class, 0);
    for (uint32_t s = 0; s < n; ++s) {
      if (core[s] && !keyed[cls[s]]) keyed[cls[s]] = 1, class_of_key(s, cls[s]);
    }
  }
  std::vector<uint32_t> pending(n, 0), ready;
  for (uint32_t s = 0; s < n; ++s) {
    if (!live[s] || core[s]) continue;
    for (const auto& e : states.edges_of(s)) pending[s] += live[e.target] && !core[e.target] ? 1 : 0;
    if (pending[s] == 0) ready.push_back(s);
  }
  while (!ready.empty()) {
    const uint32_t s = ready.back();
    ready.pop_back();
    cls[s] = class_of_key(s, kUnsettled);
    for (const uint32_t p : preds.of(s)) {
      if (live[p] && !core[p] && --pending[p] == 0) ready.push_back(p);
    }
  }
  const uint32_t dead = next_class;
  for (uint32_t s = 0; s < n; ++s) {
    if (!live[s]) cls[s] = dead;
  }
  return cls;
}

// refined_classes() of a few live states: Moore's refinement, each round classing every
// live state by its class and its edges to classes (adjacent ranges to one class merged),
// until no class splits. A number's exponent automaton has a dozen states, and a range of
// integers builds hundreds of them; the general refinement's setup (edge labels, sorted
// transitions) cost more than these rounds. The coarsest stable partition is unique, so the
// classes are those of the general refinement (numbered otherwise).
template <class View>
std::vector<uint32_t> moore_classes(const View& states, const std::vector<char>& live) {
  const auto n = static_cast<uint32_t>(states.size());
  std::vector<uint32_t> cls(n, 0), next(n, 0);
  for (uint32_t s = 0; s < n; ++s) cls[s] = live[s] && states.is_final(s) ? 1 : 0;
  std::vector<uint32_t> keys, key_begin, key;
  size_t count = 0;
  for (;;) {
    keys.clear();
    key_begin.assign(1, 0);
    for (uint32_t s = 0; s < n; ++s) {
      if (!live[s]) continue;
      key.assign(1, cls[s]);
      for (const auto& e : states.edges_of(s)) {
        if (live[e.target]) char_dfa_detail::append_class_edge(key, e.lo, e.hi, cls[e.target]);
      }
      uint32_t id = 0;
      const auto classes = static_cast<uint32_t>(key_begin.size() - 1);
      for (; id < classes; ++id) {
        if (std::equal(key.begin(), key.end(), keys.begin() + key_begin[id], keys.begin() + key_begin[id + 1])) break;
      }
      if (id == classes) {
        keys.insert(keys.end(), key.begin(), key.end());
        key_begin.push_back(static_cast<uint32_t>(keys.size()));
      }
      next[s] = id;
    }
    const size_t classes = key_begin.size() - 1;
    cls.swap(next);
    if (classes == count) break;  // a refinement that splits nothing: stable
    count = classes;
  }
  for (uint32_t s = 0; s < n; ++s) {
    if (!live[s]) cls[s] = static_cast<uint32_t>(count);  // the dead states' own class
  }
  return cls;
}

// Live states up to which moore_classes() is used.
constexpr size_t kMooreStates = 48;

// The language classes of the states by partition refinement (Valmari–Lehtinen,
// partition_refinement.h), dead states in a class of their own; dead edges vanish. Labels
// are the classes of code points no edge boundary separates.
// `live_count` live states: at most kMooreStates take moore_classes().
template <class View>
std::vector<uint32_t> refined_classes(const View& states, const std::vector<char>& live,
                                      size_t live_count) {
  if (live_count <= kMooreStates) return moore_classes(states, live);
  const size_t n = states.size();
  // The edge boundaries, most repeats dropped on the way by a small direct-mapped table of
  // recent ones (an automaton of tens of thousands of states over ten digits has a dozen
  // distinct boundaries): what is left to sort is near the distinct count.
  std::vector<uint32_t> cuts;
  std::array<uint32_t, 256> recent;
  recent.fill(UINT32_MAX);  // no boundary: at most kMaxCodepoint + 1
  auto add_cut = [&](uint32_t c) {
    uint32_t& slot = recent[(c * 0x9E3779B1u) >> 24];
    if (slot == c) return;
    slot = c;
    cuts.push_back(c);
  };
  size_t edge_count = 0;
  for (uint32_t s = 0; s < n; ++s) {
    if (!live[s]) continue;
    for (const auto& e : states.edges_of(s)) {
      if (!live[e.target]) continue;
      add_cut(e.lo);
      add_cut(e.hi + 1);
      ++edge_count;
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<LabeledTransition> transitions;
  transitions.reserve(edge_count);
  std::vector<uint32_t> initial(n);
  for (uint32_t s = 0; s < n; ++s) {
    initial[s] = !live[s] ? 2 : states.is_final(s) ? 1 : 0;
    if (!live[s]) continue;
    for (const auto& e : states.edges_of(s)) {
      if (!live[e.target]) continue;
      for (auto k = static_cast<uint32_t>(std::lower_bound(cuts.begin(), cuts.end(), e.lo) - cuts.begin());
           k < cuts.size() && cuts[k] <= e.hi; ++k) {
        transitions.push_back({s, k, e.target});
      }
    }
  }
  return coarsest_partition(static_cast<uint32_t>(n), initial, std::move(transitions), /*rounds_first=*/true);
}

}  // namespace lockstep::char_dfa_detail
