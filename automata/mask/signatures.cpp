// automata/mask/signatures.cpp — canonical signatures of states (automaton-rule states,
// grammar-rule networks), structural rule hashes, and the context every key carries: the
// keys under which masks and segments are shared process-wide.
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "automata/mask/impl.h"
#include "grammar/hash.h"

namespace lockstep {

namespace {

// Where TokenMaskCache::Impl::rule_hash() stands for a rule.
enum RuleHashState : uint8_t { kHashUnknown, kHashInProgress, kHashDone, kHashNone };

// Breadth-first numbering of the states reachable from a start state, hashed to 128 bits as
// it goes: the canonical form behind both state signatures. The per-state index array is
// reused across calls; each call marks its entries with a fresh stamp instead of clearing.
class CanonicalNumbering {
 public:
  CanonicalNumbering(std::vector<uint64_t>& index, std::vector<uint32_t>& order, uint64_t& stamps,
                     uint32_t num_states, uint32_t start)
      : index_(index), order_(order), stamp_(++stamps << 32) {
    if (index_.size() != num_states) index_.assign(num_states, 0);
    order_.assign(1, start);
    index_[start] = stamp_;
  }
  /// States numbered so far, in order (grows while the caller walks it).
  const std::vector<uint32_t>& order() const { return order_; }
  /// The number of state `s`, numbering it next when it is new. Called per edge in the
  /// numbering loops, and inlined there (GCC stopped inlining it on its own when these
  /// functions left mask_cache.cpp, which cost ~7% of a signature's time).
  [[gnu::always_inline]] uint32_t number(uint32_t s) {
    uint64_t& slot = index_[s];
    if ((slot & ~uint64_t{0xFFFFFFFF}) != stamp_) {
      slot = stamp_ | order_.size();
      order_.push_back(s);
    }
    return static_cast<uint32_t>(slot);
  }
  void mix(uint64_t v) { digest_.mix(v); }
  void append_hash(std::string& out) const { digest_.append_to(out); }
  std::pair<uint64_t, uint64_t> hash() const { return digest_.value(); }

 private:
  std::vector<uint64_t>& index_;
  std::vector<uint32_t>& order_;
  const uint64_t stamp_;
  Digest128 digest_;
};

}  // namespace

// The recursive transition network a walk from `q` (a grammar rule's state) can reach: the
// states of q's rule reachable from q, numbered breadth-first (byte edges in order, then rule
// edges), each with its finality, and the rules called, each named by a structural hash of
// its automaton and its own callees (rule_hash()). The token classification of q is a
// function of this structure, FOLLOW of q's rule, whether the output may end after it, the
// vocabulary and the parser limits; all of them hashed to 128 bits make the key. Where a
// callee is recursive, the network is numbered as one graph instead (network_bfs(), up to
// kMaxNetworkStates states, else no key).
std::string TokenMaskCache::Impl::network_signature(uint32_t q) const {
  const GrammarAutomaton& g = *grammar_;
  const uint32_t rule = g.rule_of(q);
  std::lock_guard lock(canonical_mutex_);
  // When q's rule has a structural hash, so has every rule it calls (none is recursive): the
  // network is q's own rule from q with each callee named by its hash, a walk of q's rule
  // alone, however large the rules called. rule_hash() is memoized, so this test is O(1)
  // after a rule's first state.
  std::string key;
  if (rule_hash(rule)) {
    const auto h = hash_within_rule(q, 0xD0);
    key.assign(1, 'N');
    key.append(reinterpret_cast<const char*>(&h.first), sizeof h.first);
    key.append(reinterpret_cast<const char*>(&h.second), sizeof h.second);
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
const std::pair<uint64_t, uint64_t>* TokenMaskCache::Impl::rule_hash(uint32_t rule) const {
  const GrammarAutomaton& g = *grammar_;
  if (rule_hash_state_.size() != g.num_rules()) {
    rule_hash_state_.assign(g.num_rules(), 0);
    rule_hash_.assign(g.num_rules(), {});
  }
  if (rule_hash_state_[rule] == kHashDone) return &rule_hash_[rule];
  if (rule_hash_state_[rule] != kHashUnknown) return nullptr;  // recursive
  rule_hash_state_[rule] = kHashInProgress;
  for (uint32_t s = g.rule_start(rule); s < g.rule_end(rule); ++s) {
    for (const auto& e : g.rule_edges(s)) {
      if (!rule_hash(e.rule)) {
        rule_hash_state_[rule] = kHashNone;
        return nullptr;
      }
    }
  }
  const auto h = hash_within_rule(g.rule_start(rule), 0xE0);
  rule_hash_[rule] = h;
  rule_hash_state_[rule] = kHashDone;
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
  static constexpr size_t kMaxNetworkStates = 1024;
  const GrammarAutomaton& g = *grammar_;
  const uint32_t rule = g.rule_of(q);
  CanonicalNumbering c(canonical_index_, canonical_order_, canonical_stamps_, g.num_states(), q);
  for (size_t i = 0; i < c.order().size(); ++i) {
    if (c.order().size() > kMaxNetworkStates) return {};
    const uint32_t s = c.order()[i];
    c.mix((g.is_final(s) ? 1u : 0u) | (g.rule_of(s) == rule ? 2u : 0u) | 0xA0u);
    for (const auto& e : g.byte_edges(s)) {
      c.mix(static_cast<uint64_t>(e.lo) << 8 | e.hi);
      c.mix(c.number(e.target));
    }
    c.mix(0xB0);
    for (const auto& e : g.rule_edges(s)) {
      c.mix(c.number(g.rule_start(e.rule)));
      c.mix(c.number(e.target));
    }
    c.mix(0xC0);
  }
  std::string key = "R";
  c.append_hash(key);
  return key;
}

// The automaton reachable from `q` (an automaton-only rule's state) in a canonical form —
// states numbered in breadth-first order along sorted byte edges, then rule edges (a JSON
// string's surrogate pairs), which for a minimal DFA names it up to isomorphism — hashed to
// 128 bits, with the rule's FOLLOW set. A rule edge names its callee by rule_hash(). Empty
// when more than kMaxSignatureStates states are reachable.
const std::string& TokenMaskCache::Impl::signature(uint32_t q) const {
  std::lock_guard lock(canonical_mutex_);
  auto [it, fresh] = signatures_.try_emplace(q);
  if (fresh) numbered_signature(q, UINT32_MAX, 0, it->second);
  return it->second;
}

// signature() cut at kShortTokenBytes: what a walk of a token of at most kShortTokenBytes
// bytes can read after q, the state its first byte leads to. Such a token reads the byte
// edges of states at most kShortTokenBytes - 2 bytes past q and the finality of states at
// most kShortTokenBytes - 1 bytes past q; breadth-first levels give each state its least
// depth, so states deeper than that are left out (the last level keeps only its finality).
// A rule edge's target is put one level below its caller, though the callee reads at
// least one byte first: a conservative depth keeps more of the automaton in the key, never
// less. Positions of a length-bounded string with more than kShortTokenBytes positions left
// have the same cut signature, so they share the segments of their short tokens. The
// signature starts with 'C' when nothing was cut (the whole automaton from q is in it: it
// keys the walks of all tokens), else 'T'.
const std::string& TokenMaskCache::Impl::short_signature(uint32_t q) const {
  std::lock_guard lock(canonical_mutex_);
  auto [it, fresh] = short_signatures_.try_emplace(q);
  if (fresh) {
    std::string sig;
    const bool cut = numbered_signature(q, mask::kShortTokenBytes - 1, 0x5100 | mask::kShortTokenBytes, sig);
    if (!sig.empty()) it->second = (cut ? "T" : "C") + sig;
  }
  return it->second;
}

// The automaton reachable from q in canonical form (see signature()), into `sig` (left
// empty: no signature), with `tag` mixed first when not 0; states at level `frontier` of
// the breadth-first numbering keep only their finality. True when one of those has edges
// (the automaton goes on past the frontier). Requires canonical_mutex_.
bool TokenMaskCache::Impl::numbered_signature(uint32_t q, uint32_t frontier, uint64_t tag, std::string& sig) const {
  // Up to a bounded string of ~128 code points (a JSON string automaton spends ~14 states on
  // a code point): their positions then share masks across every length bound.
  static constexpr size_t kMaxSignatureStates = 2048;
  const GrammarAutomaton& g = *grammar_;
  // A callee not hashed yet is hashed outside the walk (rule_hash() uses the same scratch),
  // and the walk starts over.
  for (uint32_t unhashed = UINT32_MAX;; unhashed = UINT32_MAX) {
    CanonicalNumbering c(canonical_index_, canonical_order_, canonical_stamps_, g.num_states(), q);
    if (tag != 0) c.mix(tag);
    uint32_t level = 0;
    size_t level_end = 1;  // order()[i] is at `level` while i < level_end
    bool cut = false;
    for (size_t i = 0; i < c.order().size() && unhashed == UINT32_MAX; ++i) {
      if (i == level_end) {
        ++level;
        level_end = c.order().size();
      }
      if (c.order().size() > kMaxSignatureStates) return false;  // too big: no signature
      const uint32_t s = c.order()[i];
      c.mix(g.is_final(s) ? 0xF1 : 0xF0);
      if (level == frontier) {
        cut = cut || !g.byte_edges(s).empty() || !g.rule_edges(s).empty();
        continue;
      }
      for (const auto& e : g.byte_edges(s)) {
        c.mix(static_cast<uint32_t>(e.lo) << 8 | e.hi);
        c.mix(c.number(e.target));
      }
      if (!g.rule_edges(s).empty()) c.mix(0xED);
      for (const auto& e : g.rule_edges(s)) {
        if (rule_hash_state_.size() != g.num_rules() || rule_hash_state_[e.rule] != kHashDone) {
          unhashed = e.rule;
          break;
        }
        c.mix(rule_hash_[e.rule].first);
        c.mix(rule_hash_[e.rule].second);
        c.mix(c.number(e.target));
      }
      c.mix(0xEE);
    }
    if (unhashed == UINT32_MAX) {
      c.append_hash(sig);
      append_context(sig, g.rule_of(q));
      return cut;
    }
    if (!rule_hash(unhashed)) return false;  // a recursive callee: no signature
  }
}

void TokenMaskCache::Impl::append_context(std::string& key, uint32_t rule) const {
  const GrammarAutomaton& g = *grammar_;
  for (unsigned b = 0; b < 256; b += 8) {
    uint8_t bits = 0;
    for (unsigned k = 0; k < 8; ++k) bits |= static_cast<uint8_t>(g.can_follow(rule, static_cast<uint8_t>(b + k)) << k);
    key.push_back(static_cast<char>(bits));
  }
  const uint64_t vocab = vocabulary_->id();
  key.append(reinterpret_cast<const char*>(&vocab), sizeof vocab);
}

}  // namespace lockstep
