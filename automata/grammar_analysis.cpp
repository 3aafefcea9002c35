// automata/grammar_analysis.cpp — FIRST/FOLLOW bytes and nullability, call-graph
// components and mask classes of a compiled grammar automaton (grammar_analysis.h).
#include "automata/grammar_analysis.h"

#include <algorithm>
#include <string>
#include <map>
#include <tuple>
#include <vector>

#include "grammar/intern_table.h"
#include "grammar/partition_refinement.h"

namespace lockstep {

// FIRST sets per state and FOLLOW sets per rule (bytes), by fixed-point iteration.
// Rules from `first_escape` on are escape rules (json_escapes.h).
void AutomatonAnalysis::compute_follow(GrammarAutomaton& g, uint32_t first_escape,
                                       const std::vector<std::string>& follow_classes) {
  using Bits = GrammarAutomaton::ByteSet;
  auto count = [](const Bits& b) { return GrammarAutomaton::byte_count(b); };
  const uint32_t ns = g.num_states(), nr = g.num_rules();
  auto merge = [](Bits& into, const Bits& from) {
    bool changed = false;
    for (int i = 0; i < 4; ++i) {
      const uint64_t v = into[i] | from[i];
      changed |= v != into[i];
      into[i] = v;
    }
    return changed;
  };
  // Only states with rule edges take part in the fixed points below (a byte edge adds
  // nothing to nullability and its FIRST bytes are known at once): iterating just those
  // keeps a grammar of many automaton states cheap. Nor do the calls of automaton-only
  // rules, a JSON string's escape calls at every position: an escape rule is never
  // nullable, and such a call neither leaves a rule's start nor lands where another call
  // reads FIRST (it leaves the state after the backslash). An escape rule's FOLLOW is taken
  // as every byte and the end: a superset, which only lets more tokens count as uncertain
  // inside an escape (the matcher checks those against the real context) and spares
  // computing FIRST at each position's call target.
  std::vector<uint32_t> callers;
  for (uint32_t q = 0; q < ns; ++q) {
    if (!g.rule_edges(q).empty() && g.rule_automaton_key_[g.rule_of(q)].empty()) callers.push_back(q);
  }
  // nullable_state: the state can reach a final state of its rule without reading bytes.
  std::vector<char> nullable_state(ns, 0);
  for (uint32_t q = 0; q < ns; ++q) nullable_state[q] = g.is_final(q) ? 1 : 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (const uint32_t q : callers) {
      if (nullable_state[q]) continue;
      bool n = false;
      for (const auto& e : g.rule_edges(q)) n = n || (g.rule_nullable(e.rule) && nullable_state[e.target]);
      if (n) nullable_state[q] = 1, changed = true;
    }
  }
  // A state that can complete its rule by skipping nullable callees is final: walks and
  // parsers that ask whether a frame may complete here need not look through rule edges
  // (`x ::= "a" ws` may complete right after "a" when ws is nullable).
  for (uint32_t q = 0; q < ns; ++q) g.state_final_[q] = static_cast<uint8_t>(nullable_state[q]);
  // FIRST bytes are needed only where rule edges leave, start or land (most states of a
  // large grammar are inside automata and have none); they get a slot each.
  std::vector<uint32_t> slot(ns, UINT32_MAX);
  uint32_t num_slots = 0;
  auto need = [&](uint32_t q) {
    if (slot[q] == UINT32_MAX) slot[q] = num_slots++;
  };
  for (uint32_t r = 0; r < nr; ++r) need(g.rule_start(r));
  for (const uint32_t q : callers) {
    need(q);
    for (const auto& e : g.rule_edges(q)) need(e.target);
  }
  std::vector<Bits> first_slots(num_slots, Bits{});
  for (uint32_t q = 0; q < ns; ++q) {
    if (slot[q] == UINT32_MAX) continue;
    for (const auto& e : g.byte_edges(q)) GrammarAutomaton::add_byte_range(first_slots[slot[q]], e.lo, e.hi);
  }
  auto first = [&](uint32_t q) -> Bits& { return first_slots[slot[q]]; };
  // FIRST through rule edges, by a worklist: a caller is looked at again only when a
  // state it reads from (a callee's start, or past a nullable callee the edge's target)
  // gained bytes.
  {
    std::vector<uint32_t> dep_begin(ns + 1, 0), deps;
    for (const uint32_t q : callers) {
      for (const auto& e : g.rule_edges(q)) {
        ++dep_begin[g.rule_start(e.rule) + 1];
        if (g.rule_nullable(e.rule)) ++dep_begin[e.target + 1];
      }
    }
    for (uint32_t q = 0; q < ns; ++q) dep_begin[q + 1] += dep_begin[q];
    deps.resize(dep_begin[ns]);
    std::vector<uint32_t> fill(dep_begin.begin(), dep_begin.end() - 1);
    for (const uint32_t q : callers) {
      for (const auto& e : g.rule_edges(q)) {
        deps[fill[g.rule_start(e.rule)]++] = q;
        if (g.rule_nullable(e.rule)) deps[fill[e.target]++] = q;
      }
    }
    std::vector<uint32_t> work(callers.rbegin(), callers.rend());
    std::vector<char> queued(ns, 0);
    for (const uint32_t q : callers) queued[q] = 1;
    while (!work.empty()) {
      const uint32_t q = work.back();
      work.pop_back();
      queued[q] = 0;
      bool changed = false;
      for (const auto& e : g.rule_edges(q)) {
        changed |= merge(first(q), first(g.rule_start(e.rule)));
        if (g.rule_nullable(e.rule)) changed |= merge(first(q), first(e.target));
      }
      if (!changed) continue;
      for (uint32_t k = dep_begin[q]; k < dep_begin[q + 1]; ++k) {
        if (!queued[deps[k]]) queued[deps[k]] = 1, work.push_back(deps[k]);
      }
    }
  }
  g.rule_first_.resize(nr);
  for (uint32_t r = 0; r < nr; ++r) g.rule_first_[r] = first(g.rule_start(r));
  // FOLLOW: what comes after each call, then, along calls that may end their caller,
  // the caller's FOLLOW (and end of output), propagated by a worklist over rules.
  g.follow_.assign(nr, Bits{});
  g.follow_end_.assign(nr, 0);
  g.follow_end_[g.root_rule()] = 1;
  std::vector<std::vector<uint32_t>> tail_calls(nr);  // parent → callees that may end it
  for (const uint32_t p : callers) {
    for (const auto& e : g.rule_edges(p)) {
      merge(g.follow_[e.rule], first(e.target));
      if (nullable_state[e.target]) tail_calls[g.rule_of(p)].push_back(e.rule);
    }
  }
  {
    std::vector<uint32_t> work;
    std::vector<char> queued(nr, 1);
    for (uint32_t r = 0; r < nr; ++r) work.push_back(nr - 1 - r);
    while (!work.empty()) {
      const uint32_t parent = work.back();
      work.pop_back();
      queued[parent] = 0;
      for (const uint32_t callee : tail_calls[parent]) {
        bool changed = merge(g.follow_[callee], g.follow_[parent]);
        if (g.follow_end_[parent] && !g.follow_end_[callee]) {
          g.follow_end_[callee] = 1;
          changed = true;
        }
        if (changed && !queued[callee]) queued[callee] = 1, work.push_back(callee);
      }
    }
  }
  // Widened to the grammar's FOLLOW classes (Grammar::follow_classes): the smallest that
  // holds a rule's FOLLOW of two bytes or more replaces it.
  std::vector<Bits> classes;
  for (const std::string& c : follow_classes) {
    Bits bits{};
    for (const char ch : c) GrammarAutomaton::add_byte_range(bits, static_cast<uint8_t>(ch), static_cast<uint8_t>(ch));
    classes.push_back(bits);
  }
  std::sort(classes.begin(), classes.end(), [&count](const Bits& a, const Bits& b) { return count(a) < count(b); });
  for (uint32_t r = 0; r < first_escape && !classes.empty(); ++r) {
    const Bits& f = g.follow_[r];
    // Not a FOLLOW of one byte: a string body followed by its quote alone would turn every
    // token failing at `,` or a digit after it uncertain.
    if (count(f) < 2) continue;
    for (const Bits& c : classes) {
      if ((f[0] & ~c[0]) == 0 && (f[1] & ~c[1]) == 0 && (f[2] & ~c[2]) == 0 && (f[3] & ~c[3]) == 0) {
        g.follow_[r] = c;
        break;
      }
    }
  }
  for (uint32_t r = first_escape; r < nr; ++r) {
    g.follow_[r].fill(~uint64_t{0});
    g.follow_end_[r] = 1;
  }
  g.state_simple_.resize(ns);
  for (uint32_t q = 0; q < ns; ++q) g.state_simple_[q] = !g.is_final(q) && g.rule_edges(q).empty();
}

// Strongly connected components of the rule call graph (Tarjan's algorithm, iterative).
void AutomatonAnalysis::compute_components(GrammarAutomaton& g) {
  const uint32_t nr = g.num_rules();
  // The rules each rule calls, end to end (a rule's states are consecutive): one vector per
  // rule was most of this pass's allocations in a large schema's grammar.
  std::vector<uint32_t> call_begin(nr + 1, 0), calls;
  for (uint32_t r = 0; r < nr; ++r) {
    call_begin[r] = static_cast<uint32_t>(calls.size());
    for (uint32_t q = g.rule_start(r); q < g.rule_end(r); ++q) {
      for (const auto& e : g.rule_edges(q)) {  // once per run: a string calls its escape rules at each position
        if (calls.size() == call_begin[r] || calls.back() != e.rule) calls.push_back(e.rule);
      }
    }
  }
  call_begin[nr] = static_cast<uint32_t>(calls.size());
  constexpr uint32_t kUnset = UINT32_MAX;
  std::vector<uint32_t> index(nr, kUnset), low(nr, 0), stack;
  std::vector<char> on_stack(nr, 0);
  g.rule_component_.assign(nr, kUnset);
  uint32_t next_index = 0, components = 0;
  std::vector<std::pair<uint32_t, uint32_t>> frames;  // (rule, position in its calls)
  for (uint32_t root = 0; root < nr; ++root) {
    if (index[root] != kUnset) continue;
    frames.assign(1, {root, call_begin[root]});
    index[root] = low[root] = next_index++;
    stack.push_back(root);
    on_stack[root] = 1;
    while (!frames.empty()) {
      auto& [v, k] = frames.back();
      if (k < call_begin[v + 1]) {
        const uint32_t w = calls[k++];
        if (index[w] == kUnset) {
          index[w] = low[w] = next_index++;
          stack.push_back(w);
          on_stack[w] = 1;
          frames.push_back({w, call_begin[w]});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        uint32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          g.rule_component_[w] = components;
        } while (w != v);
        ++components;
      }
      const uint32_t done = v;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().first] = std::min(low[frames.back().first], low[done]);
    }
  }
}

// Mask classes: states whose token classification is provably the same. Two states
// share a class when they read the same language of bytes and rule symbols up to their
// rules' completions (the coarsest partition over every rule's states at once) and their
// rules have the same FOLLOW set — hundreds of member rules of one JSON Schema then share
// the mask of "inside a string value".
//
// States of automaton-only rules stay out of the refinement, one class each: their byte
// DFAs are minimal already, and equal states of equal or isomorphic automata share their
// masks through TokenMaskCache's process-wide cache, keyed by the reachable automaton. A
// long string (maxLength 65535: several hundred thousand states) then costs nothing here.
void AutomatonAnalysis::compute_mask_classes(GrammarAutomaton& g) {
  const uint32_t ns = g.num_states();
  constexpr uint32_t kOwn = UINT32_MAX;
  // Dense numbering of the refined states (those of rules with rule edges or bytes only
  // from grammar syntax), kOwn for automaton-rule states.
  std::vector<uint32_t> local(ns, kOwn);
  std::vector<uint32_t> refined;
  for (uint32_t q = 0; q < ns; ++q) {
    if (!g.rule_automaton_key_[g.rule_of(q)].empty()) continue;
    local[q] = static_cast<uint32_t>(refined.size());
    refined.push_back(q);
  }
  const uint32_t nr = static_cast<uint32_t>(refined.size());
  // The initial blocks depend on the rule and finality only: looked up once per (rule,
  // finality), not once per state.
  std::map<std::tuple<bool, GrammarAutomaton::ByteSet, bool>, uint32_t> keys;
  std::vector<uint32_t> initial(nr), rule_key(2 * size_t{g.num_rules()}, kOwn);
  for (uint32_t i = 0; i < nr; ++i) {
    const uint32_t q = refined[i];
    const uint32_t r = g.rule_of(q);
    uint32_t& k = rule_key[2 * size_t{r} + (g.is_final(q) ? 1 : 0)];
    if (k == kOwn) {
      k = keys.try_emplace({g.is_final(q), g.follow_[r], g.follow_end_[r] != 0}, keys.size()).first->second;
    }
    initial[i] = k;
  }
  // Labels: each distinct byte range is one label (edges are kept merged per target, so
  // equivalent states normally list the same ranges; where they do not, the classes only
  // come out finer, never wrong), numbered as first met (InternTable), then one label per
  // rule: proportional to the grammar's distinct ranges, where a dense table of all 65,536
  // would cost a fresh process 256 KB of page faults, and sorting every edge's range cost a
  // tenth of this analysis.
  InternTable<uint32_t, Mixed64Hash> ranges(64);
  const auto range_label = [&](const GrammarAutomaton::ByteEdge& e) { return ranges.intern(e.lo * 256u + e.hi).first; };
  std::vector<LabeledTransition> transitions;
  for (uint32_t i = 0; i < nr; ++i) {
    const uint32_t q = refined[i];
    for (const auto& e : g.byte_edges(q)) transitions.push_back({i, range_label(e), local[e.target]});
  }
  // Rule labels after every range label.
  const auto labels = static_cast<uint32_t>(ranges.size());
  for (uint32_t i = 0; i < nr; ++i) {
    const uint32_t q = refined[i];
    for (const auto& e : g.rule_edges(q)) transitions.push_back({i, labels + e.rule, local[e.target]});
  }
  const std::vector<uint32_t> block = coarsest_partition(nr, initial, std::move(transitions));
  // Classes numbered in order of their first state: refined blocks keep theirs, every
  // other state opens a class of its own.
  g.state_class_.assign(ns, 0);
  g.class_state_.clear();
  std::vector<uint32_t> block_class;
  for (uint32_t q = 0; q < ns; ++q) {
    uint32_t c;
    if (local[q] == kOwn) {
      c = static_cast<uint32_t>(g.class_state_.size());
    } else {
      const uint32_t b = block[local[q]];
      if (b == block_class.size()) block_class.push_back(static_cast<uint32_t>(g.class_state_.size()));
      c = block_class[b];
    }
    if (c == g.class_state_.size()) g.class_state_.push_back(q);
    g.state_class_[q] = c;
  }
}

}  // namespace lockstep
