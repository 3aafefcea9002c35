// automata/mask/network_signatures.cpp — keys of grammar-rule states: the canonical
// signature of the recursive transition network a walk from the state can reach, and the
// structural hashes of rules it names callees by (signatures.cpp has the automaton-rule
// states' signatures).
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "automata/mask/canonical_numbering.h"
#include "automata/mask/impl.h"

namespace lockstep {

using mask::CanonicalNumbering;

namespace {

// States of rules not hashed before that one rule_hash() call hashes before it gives up: the
// state is then walked without a shared key. The start of an `anyOf` of 200 objects with
// required names in any order calls 11,000 rules; hashing all of them took about 2 ms of its
// first mask (a fresh process), for a key that no other grammar's state would have. Networks
// that recur across schemas (a member rule and the value rules it calls) are far smaller.
constexpr size_t kMaxHashedStates = 8192;

}  // namespace

// The recursive transition network a walk from `q` (a grammar rule's state) can reach: the
// states of q's rule reachable from q, numbered breadth-first (byte edges in order, then rule
// edges), each with its finality, and the rules called, each named by a structural hash of
// its automaton and its own callees (rule_hash()). The token classification of q is a
// function of this structure, FOLLOW of q's rule, whether the output may end after it, the
// vocabulary and the parser limits; all of them hashed to 128 bits make the key. A recursive
// callee is named by its own network numbered as one graph (recursive_rule_hash()); where
// that passes kMaxNetworkStates, q's network is numbered as one graph instead (network_bfs(),
// up to kMaxNetworkStates states, else no key); past kMaxHashedStates new states, no key.
std::string TokenMaskCache::Impl::network_signature(uint32_t q) const {
  const GrammarAutomaton& g = *grammar_;
  const uint32_t rule = g.rule_of(q);
  std::lock_guard lock(canonical_mutex_);
  // When q's rule has a structural hash, so has every rule it calls (a recursive one by its
  // network): the network is q's own rule from q with each callee named by its hash, a walk
  // of q's rule alone, however large the rules called. rule_hash() is memoized, so this test
  // is O(1) after a rule's first state.
  std::string key;
  if (rule_hash(rule)) {
    const auto h = hash_within_rule(q, 0xD0);
    key.assign(1, 'N');
    key.append(reinterpret_cast<const char*>(&h.first), sizeof h.first);
    key.append(reinterpret_cast<const char*>(&h.second), sizeof h.second);
  } else if (rule_hash_state_[rule] == mask::kHashTooLarge) {
    return key;  // no key: network_bfs() would stop at its bound, far below this network
  } else {
    key = network_bfs(q);
    if (key.empty()) return key;
  }
  append_context(key, rule);
  key.push_back(g.can_end_after(rule) ? '1' : '0');
  key.append(reinterpret_cast<const char*>(&limits_.max_items_per_set), sizeof limits_.max_items_per_set);
  key.append(reinterpret_cast<const char*>(&limits_.max_total_items), sizeof limits_.max_total_items);
  return key;
}

// A rule's automaton in canonical form (breadth-first from its start), each rule edge
// naming its callee by the callee's own hash: isomorphic call trees hash alike. Null for a
// rule that calls itself, directly or not. Requires canonical_mutex_.
// Null, too, when the rules not hashed before that it needs have more than kMaxHashedStates
// states (the rule is then mask::kHashTooLarge; the rules that were in progress below it stay
// unknown, and the ones completed keep their hashes).
const std::pair<uint64_t, uint64_t>* TokenMaskCache::Impl::rule_hash(uint32_t rule) const {
  const GrammarAutomaton& g = *grammar_;
  if (rule_hash_state_.size() != g.num_rules()) {
    rule_hash_state_.assign(g.num_rules(), 0);
    rule_hash_.assign(g.num_rules(), {});
  }
  size_t budget = kMaxHashedStates;
  bool over = false;
  const auto* h = rule_hash_within(rule, budget, over);
  if (!h && over) rule_hash_state_[rule] = mask::kHashTooLarge;
  return h;
}

// rule_hash() within `budget` states; sets `over` when a rule needed is too large.
const std::pair<uint64_t, uint64_t>* TokenMaskCache::Impl::rule_hash_within(uint32_t rule, size_t& budget,
                                                                           bool& over) const {
  const GrammarAutomaton& g = *grammar_;
  if (rule_hash_state_[rule] == mask::kHashDone) return &rule_hash_[rule];
  if (rule_hash_state_[rule] == mask::kHashTooLarge) over = true;
  if (rule_hash_state_[rule] != mask::kHashUnknown) return nullptr;  // recursive, or too large
  // Larger than the budget left, it is too large whatever its callees: said before they are
  // looked at (the automaton of a 50,000-word enum calls thousands of escape rules).
  const size_t states = g.rule_end(rule) - g.rule_start(rule);
  if (states > budget) {
    over = true;
    return nullptr;
  }
  rule_hash_state_[rule] = mask::kHashInProgress;
  for (uint32_t s = g.rule_start(rule); s < g.rule_end(rule); ++s) {
    for (const auto& e : g.rule_edges(s)) {
      if (!rule_hash_within(e.rule, budget, over)) {
        if (!over) return recursive_rule_hash(rule);
        rule_hash_state_[rule] = mask::kHashUnknown;
        return nullptr;
      }
    }
  }
  if (states > budget) {  // the callees took the rest
    over = true;
    rule_hash_state_[rule] = mask::kHashUnknown;
    return nullptr;
  }
  budget -= states;
  const auto h = hash_within_rule(g.rule_start(rule), 0xE0);
  rule_hash_[rule] = h;
  rule_hash_state_[rule] = mask::kHashDone;
  return &rule_hash_[rule];
}

// A rule that calls itself (through its callees or not) is named by the network numbered
// from its start as one graph (network_digest()): everything a walk through one of its calls
// can reach, so equal names still mean isomorphic call trees. Its callers then have a
// structural hash and sign their states by their own rule alone: an object that admits
// other properties calls the recursive JSON value, and each of its states was numbered
// as one graph with that value's rules (up to 1,024 states, a fifth of the masks after a
// comma in the alternatives of `dependentSchemas`). Null, as before, when the network passes
// the bound (network_digest()). Requires canonical_mutex_.
const std::pair<uint64_t, uint64_t>* TokenMaskCache::Impl::recursive_rule_hash(uint32_t rule) const {
  std::pair<uint64_t, uint64_t> network;
  if (!network_digest(grammar_->rule_start(rule), network)) {
    rule_hash_state_[rule] = mask::kHashNone;
    return nullptr;
  }
  Digest128 d;
  d.mix(0xF0);  // apart from the rule hashes of hash_within_rule()
  d.mix(network.first);
  d.mix(network.second);
  rule_hash_[rule] = d.value();
  rule_hash_state_[rule] = mask::kHashDone;
  return &rule_hash_[rule];
}

// The states of `start`'s rule reachable from it in canonical order (breadth-first, byte
// edges then rule edges), each with its finality, byte edges, and rule edges naming the
// callee by rule_hash() (computed already for every callee), hashed with `tag`. Requires
// canonical_mutex_.
std::pair<uint64_t, uint64_t> TokenMaskCache::Impl::hash_within_rule(uint32_t start, uint32_t tag) const {
  const GrammarAutomaton& g = *grammar_;
  CanonicalNumbering c(canonical_index_, canonical_order_, canonical_stamps_, g.num_states(), start);
  for (size_t i = 0; i < c.order().size(); ++i) {
    const uint32_t s = c.order()[i];
    c.mix((g.is_final(s) ? 1u : 0u) | tag);
    for (const auto& e : g.byte_edges(s)) {
      c.mix(static_cast<uint64_t>(e.lo) << 8 | e.hi);
      c.mix(c.number(e.target));
    }
    c.mix(0xB0);
    for (const auto& e : g.rule_edges(s)) {
      c.mix(rule_hash_[e.rule].first);
      c.mix(rule_hash_[e.rule].second);
      c.mix(c.number(e.target));
    }
    c.mix(0xC0);
  }
  return c.hash();
}

// The network of q numbered as one graph (for grammars with recursion): "R" and its hash,
// or empty past kMaxNetworkStates states. Requires canonical_mutex_.
std::string TokenMaskCache::Impl::network_bfs(uint32_t q) const {
  std::pair<uint64_t, uint64_t> h;
  if (!network_digest(q, h)) return {};
  std::string key = "R";
  key.append(reinterpret_cast<const char*>(&h.first), sizeof h.first);
  key.append(reinterpret_cast<const char*>(&h.second), sizeof h.second);
  return key;
}

// network_bfs()'s numbering, its hash into `out`; false past kMaxNetworkStates states.
//
// Every state of a rule is reachable from its start, so when a state's network is too large,
// so is the start's, and so is the network of any state that calls the rule: the numbering
// gives up at such a call at once. The nested levels of a 64-level `allOf` each gave up
// after numbering 1,024 states (3 ms per file). Other states of a rule marked so mostly pass
// the bound too (the alternatives of `dependentSchemas`: 99 numberings gave up in 28 rules
// per file): they are counted first, without hashing, and hashed only when they fit.
bool TokenMaskCache::Impl::network_digest(uint32_t q, std::pair<uint64_t, uint64_t>& out) const {
  static constexpr size_t kMaxNetworkStates = 1024;
  const GrammarAutomaton& g = *grammar_;
  const uint32_t rule = g.rule_of(q);
  if (network_overflows_.size() != g.num_rules()) network_overflows_.assign(g.num_rules(), 0);
  auto give_up = [&] {
    network_overflows_[rule] = 1;
    return false;
  };
  if (network_overflows_[rule]) {
    CanonicalNumbering count(canonical_index_, canonical_order_, canonical_stamps_, g.num_states(), q);
    for (size_t i = 0; i < count.order().size(); ++i) {
      if (count.order().size() > kMaxNetworkStates) return give_up();
      const uint32_t s = count.order()[i];
      for (const auto& e : g.byte_edges(s)) count.number(e.target);
      for (const auto& e : g.rule_edges(s)) {
        if (network_overflows_[e.rule]) return give_up();
        count.number(g.rule_start(e.rule));
        count.number(e.target);
      }
    }
  }
  CanonicalNumbering c(canonical_index_, canonical_order_, canonical_stamps_, g.num_states(), q);
  for (size_t i = 0; i < c.order().size(); ++i) {
    if (c.order().size() > kMaxNetworkStates) return give_up();
    const uint32_t s = c.order()[i];
    c.mix((g.is_final(s) ? 1u : 0u) | (g.rule_of(s) == rule ? 2u : 0u) | 0xA0u);
    for (const auto& e : g.byte_edges(s)) {
      c.mix(static_cast<uint64_t>(e.lo) << 8 | e.hi);
      c.mix(c.number(e.target));
    }
    c.mix(0xB0);
    for (const auto& e : g.rule_edges(s)) {
      if (network_overflows_[e.rule]) return give_up();
      c.mix(c.number(g.rule_start(e.rule)));
      c.mix(c.number(e.target));
    }
    c.mix(0xC0);
  }
  out = c.hash();
  return true;
}

}  // namespace lockstep
