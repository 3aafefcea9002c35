// automata/mask/signatures.cpp — canonical signatures of automaton-rule states (whole, cut
// at a depth, bottom-up), and the context every key carries: the keys under which masks and
// segments are shared process-wide (network_signatures.cpp has the grammar-rule states').
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "automata/mask/canonical_numbering.h"
#include "automata/mask/impl.h"
#include "grammar/hash.h"

namespace lockstep {

using mask::CanonicalNumbering;
using mask::kHashDone;

namespace {

// States a numbered automaton-rule signature covers: up to a bounded string of ~128 code
// points (a JSON string automaton spends ~14 states on a code point), whose positions then
// share masks across every length bound.
constexpr size_t kMaxSignatureStates = 2048;
// States a signature cut at mask::kMidTokenBytes covers (see short_signature()).
constexpr size_t kMaxMidCutStates = 256;
// States a signature cut at mask::kShortTokenBytes covers: a bounded string's position
// reaches fewer than 256 within the cut; past 512 it is a trie of hundreds of names (the 26
// letters after a 2,000-word alternation numbered 500-2,000 each, a fifth of that mask).
constexpr size_t kMaxShortCutStates = 512;

// States acyclic_hash() hashes in one call at most (those of a pattern of a few thousand
// names, a bounded string of ~500 code points): a mask pays at most this for its key.
constexpr size_t kMaxAcyclicStatesPerCall = 8192;
// Rules acyclic_hash() takes at all. Past this (an enum of 50,000 strings is one automaton
// of ~10^5 states) the states a walk asks about are spread over the automaton, so calls kept
// stopping at kMaxAcyclicStatesPerCall, several per mask (0.6-1.1 ms more on masks inside
// such an enum); those rules are numbered as before, which gives up sooner.
constexpr size_t kMaxAcyclicRuleStates = 4 * kMaxAcyclicStatesPerCall;

// A state's hash from the hashes of the states after it (Merkle-style), as acyclic_hash()
// and bounded_signature() make them: its finality, then (with `edges`) each byte edge's
// range with target(its target), and each rule edge's callee (callee(rule), the callee's
// rule_hash()) with target(its return state).
template <typename Target, typename Callee>
std::pair<uint64_t, uint64_t> merkle_state(const GrammarAutomaton& g, uint32_t s, bool edges, Target&& target,
                                           Callee&& callee) {
  Digest128 d;
  d.mix(g.is_final(s) ? 0xF1 : 0xF0);
  if (!edges) return d.value();
  for (const auto& e : g.byte_edges(s)) {
    const auto t = target(e.target);
    d.mix(static_cast<uint32_t>(e.lo) << 8 | e.hi);
    d.mix(t.first);
    d.mix(t.second);
  }
  if (!g.rule_edges(s).empty()) d.mix(0xED);
  for (const auto& e : g.rule_edges(s)) {
    const auto h = callee(e.rule);
    const auto t = target(e.target);
    d.mix(h.first);
    d.mix(h.second);
    d.mix(t.first);
    d.mix(t.second);
  }
  d.mix(0xEE);
  return d.value();
}

}  // namespace

// The automaton reachable from `q` (an automaton-only rule's state) in a canonical form —
// states numbered in breadth-first order along sorted byte edges, then rule edges (a JSON
// string's surrogate pairs), which for a minimal DFA names it up to isomorphism — hashed to
// 128 bits, with the rule's FOLLOW set. A rule edge names its callee by rule_hash(). Empty
// when more than kMaxSignatureStates states are reachable.
//
// Where no cycle is reachable from q (a bounded string, a pattern of counted repeats, a
// trie of names), the hash is made bottom-up instead (acyclic_hash()): it names the same
// walks and costs each state once for all the states above it, whatever the size of the
// automaton after it.
const std::string& TokenMaskCache::Impl::signature(uint32_t q) const {
  std::lock_guard lock(canonical_mutex_);
  auto [it, fresh] = signatures_.try_emplace(q);
  if (!fresh) return it->second;
  std::pair<uint64_t, uint64_t> h;
  switch (acyclic_hash(q, h)) {
    case Acyclic::kHashed: {
      Digest128 d;
      d.mix(0xDA6);  // apart from the numbered signatures' hashes
      d.mix(h.first);
      d.mix(h.second);
      d.append_to(it->second);
      append_context(it->second, grammar_->rule_of(q));
      break;
    }
    case Acyclic::kNumbered:
      numbered_signature(q, UINT32_MAX, 0, it->second);
      break;
    case Acyclic::kNotYet:
      break;  // more than kMaxAcyclicStatesPerCall states after q: a numbering gives up too
  }
  return it->second;
}

// The automaton reachable from q hashed bottom-up (Merkle-style), when it has no cycle: a
// state's hash mixes its finality, its byte edges each with its target's hash, and its rule
// edges each with the callee's rule_hash() and the target's hash. Equal hashes, equal walks
// from the two states, whatever the automata around them (a numbering tells isomorphic
// automata; this also joins a chain with a copy of it). Memoized by state, so the positions
// of a bounded string or a pattern pay for their automaton once, not once each (a numbering
// walks all the states after q for every q), and a state of any size gets a key. kNumbered
// (a numbering signs q instead) when a cycle or a recursive callee is reachable (those
// states are marked, and answer at once next time), and for a rule of more than
// kMaxAcyclicRuleStates states. kNotYet when more than kMaxAcyclicStatesPerCall states not
// hashed before are reachable: the states hashed are kept and the next call goes on from
// them, so no mask pays for a whole large automaton. The walk stays in q's rule (rule edges
// return to it), so the memo is allocated per rule. Iterative depth-first search. Requires
// canonical_mutex_.
TokenMaskCache::Impl::Acyclic TokenMaskCache::Impl::acyclic_hash(uint32_t q, std::pair<uint64_t, uint64_t>& out) const {
  enum : uint8_t { kUnknown, kOnPath, kDone, kCycle };
  const GrammarAutomaton& g = *grammar_;
  const uint32_t rule = g.rule_of(q), base = g.rule_start(rule);
  if (g.rule_end(rule) - base > kMaxAcyclicRuleStates) return Acyclic::kNumbered;  // numbered, as before
  AcyclicMemo& memo = acyclic_[rule];
  if (memo.state.empty()) {
    memo.state.assign(g.rule_end(rule) - base, kUnknown);
    memo.hash.resize(memo.state.size());
  }
  auto state = [&](uint32_t s) -> uint8_t& { return memo.state[s - base]; };
  auto hash = [&](uint32_t s) -> std::pair<uint64_t, uint64_t>& { return memo.hash[s - base]; };
  struct Frame {
    uint32_t state, next_edge;
  };
  std::vector<Frame> path;
  size_t entered = 0;
  auto give_up = [&](uint8_t mark) {
    for (const Frame& f : path) state(f.state) = mark;
    return mark == kCycle ? Acyclic::kNumbered : Acyclic::kNotYet;
  };
  auto enter = [&](uint32_t s) {
    state(s) = kOnPath;
    path.push_back({s, 0});
    ++entered;
  };
  if (state(q) == kCycle) return Acyclic::kNumbered;
  if (state(q) == kUnknown) enter(q);
  while (!path.empty()) {
    if (entered > kMaxAcyclicStatesPerCall) return give_up(kUnknown);
    Frame& f = path.back();
    const uint32_t s = f.state;
    const auto bytes = g.byte_edges(s);
    const auto calls = g.rule_edges(s);
    if (f.next_edge < bytes.size() + calls.size()) {
      const bool call = f.next_edge >= bytes.size();
      const uint32_t t = call ? calls[f.next_edge - bytes.size()].target : bytes[f.next_edge].target;
      if (call && !rule_hash(calls[f.next_edge - bytes.size()].rule)) return give_up(kCycle);
      ++f.next_edge;
      const uint8_t seen = state(t);
      if (seen == kOnPath || seen == kCycle) return give_up(kCycle);
      if (seen == kUnknown) enter(t);  // `f` is not used after this
      continue;
    }
    hash(s) = merkle_state(g, s, true, hash, [&](uint32_t r) { return rule_hash_[r]; });  // callees hashed above
    state(s) = kDone;
    path.pop_back();
  }
  out = hash(q);
  return Acyclic::kHashed;
}

// signature() cut at `cut_bytes` (kShortTokenBytes, or kMidTokenBytes): what a walk of a
// token of at most cut_bytes bytes can read after q, the state its first byte leads to. Such
// a token reads the byte edges of states at most cut_bytes - 2 bytes past q and the finality
// of states at most cut_bytes - 1 bytes past q; breadth-first levels give each state its least
// depth, so states deeper than that are left out (the last level keeps only its finality).
// A rule edge's target is put one level below its caller, though the callee reads at
// least one byte first: a conservative depth keeps more of the automaton in the key, never
// less. Positions of a length-bounded string with more than cut_bytes positions left have
// the same cut signature, so they share the segments of their short tokens. The
// signature starts with 'C' when nothing was cut (the whole automaton from q is in it: it
// keys the walks of all tokens), else 'T'. A numbering tells a loop from a chain, so the
// body of an unbounded string and a bounded one do not meet here (bounded_signature()).
const std::string& TokenMaskCache::Impl::short_signature(uint32_t q, uint32_t cut_bytes) const {
  std::lock_guard lock(canonical_mutex_);
  auto [it, fresh] = short_signatures_.try_emplace(uint64_t{cut_bytes} << 32 | q);
  if (fresh) {
    std::string sig;
    // The shorter cut serves the positions of a counted repeat (a few dozen states within
    // reach); past kMaxMidCutStates (a key trie of hundreds of names) it would cost more than
    // the walks it could save, and no other state would read alike. So would the longer cut
    // past kMaxShortCutStates.
    const size_t max_states = cut_bytes < mask::kShortTokenBytes ? kMaxMidCutStates : kMaxShortCutStates;
    const bool cut = numbered_signature(q, cut_bytes - 1, 0x5100 | cut_bytes, sig, max_states);
    if (!sig.empty()) it->second = (cut ? "T" : "C") + sig;
  }
  return it->second;
}

// A state's local shape: its finality, byte ranges and callees (by rule_hash(), 0 for a
// recursive one), hashed. Requires canonical_mutex_.
uint64_t TokenMaskCache::Impl::local_shape(uint32_t s) const {
  const GrammarAutomaton& g = *grammar_;
  uint64_t h = fnv1a_step(kFnvOffsetBasis, g.is_final(s) ? 0xF1 : 0xF0);
  for (const auto& e : g.byte_edges(s)) h = fnv1a_step(h, static_cast<uint32_t>(e.lo) << 8 | e.hi);
  for (const auto& e : g.rule_edges(s)) {
    const auto* callee = rule_hash(e.rule);
    h = fnv1a_step(h, callee ? callee->first : 0);
  }
  return mix64(h);
}

uint64_t TokenMaskCache::Impl::local_shape_of(uint32_t s) const {
  std::lock_guard lock(canonical_mutex_);
  return local_shape(s);
}

// The local shapes of the states a short token's walk from q reads (breadth-first levels
// short of the cut, as short_signature()), sorted and without repeats, and their hash
// (memoized). A loop and a chain that unrolls it far from its end have the same set; a
// state whose set is no stored loop's finds nothing under bounded_signature().
const TokenMaskCache::Impl::ShapeSet& TokenMaskCache::Impl::short_shapes(uint32_t q) const {
  std::lock_guard lock(canonical_mutex_);
  auto [it, fresh] = short_shapes_.try_emplace(q);
  if (!fresh) return it->second;
  const GrammarAutomaton& g = *grammar_;
  std::unordered_map<uint32_t, uint32_t> depth{{q, 0}};
  std::vector<uint32_t> order{q};
  std::vector<uint64_t>& shapes = it->second.shapes;
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t s = order[i];
    const uint32_t d = depth[s];
    if (d + 1 >= mask::kShortTokenBytes) continue;  // the cut's last level: finality only
    shapes.push_back(local_shape(s));
    auto visit = [&](uint32_t t) {
      if (depth.try_emplace(t, d + 1).second) order.push_back(t);
    };
    for (const auto& e : g.byte_edges(s)) visit(e.target);
    for (const auto& e : g.rule_edges(s)) visit(e.target);
  }
  std::sort(shapes.begin(), shapes.end());
  shapes.erase(std::unique(shapes.begin(), shapes.end()), shapes.end());
  uint64_t h = kFnvOffsetBasis;
  for (const uint64_t x : shapes) h = fnv1a_step(h, x);
  it->second.hash = mix64(h);
  return it->second;
}

// Whether every state reachable from q leads back to q (byte and rule edges): the loop of a
// string body or a pattern, which the positions of a bounded string or a counted repeat
// unroll (a state without edges counts too; its segments are never mostly accepted). Other
// automata are not stored under bounded_signature(): nothing that unrolls them would share
// their short tokens' reading. A loop of more than kMaxLoopStates states (a JSON string body
// has about 30) is not looked for: the test would cost more than the walks it could save, on
// every key trie of a schema.
bool TokenMaskCache::Impl::is_loop(uint32_t q) const {
  static constexpr size_t kMaxLoopStates = 256;
  const GrammarAutomaton& g = *grammar_;
  std::lock_guard lock(canonical_mutex_);
  if (const auto it = is_loop_.find(q); it != is_loop_.end()) return it->second;
  // Tarjan's depth-first search from q, stopped at the first strongly connected component
  // that closes without q (a dead end, or a loop q cannot be reached from): in a key trie
  // that is the first branch's end, so the answer costs a path, not the trie. States are
  // numbered by CanonicalNumbering's index array.
  CanonicalNumbering c(canonical_index_, canonical_order_, canonical_stamps_, g.num_states(), q);
  // Until a component closes every state seen is on Tarjan's stack, so none is kept.
  std::vector<uint32_t> low{0};  // by number
  struct Frame {
    uint32_t v, next_edge;
  };
  std::vector<Frame> dfs{{0, 0}};
  bool loop = true;
  while (!dfs.empty()) {
    Frame& f = dfs.back();
    const uint32_t s = c.order()[f.v];
    const auto bytes = g.byte_edges(s);
    const auto calls = g.rule_edges(s);
    if (f.next_edge < bytes.size() + calls.size()) {
      const uint32_t t = f.next_edge < bytes.size() ? bytes[f.next_edge].target : calls[f.next_edge - bytes.size()].target;
      ++f.next_edge;
      const size_t known = c.order().size();
      const uint32_t w = c.number(t);
      if (w == known) {  // first seen: numbers are discovery order
        if (c.order().size() > kMaxLoopStates) {
          loop = false;
          break;
        }
        low.push_back(w);
        dfs.push_back({w, 0});  // `f` is not used after this
      } else {
        low[f.v] = std::min(low[f.v], w);
      }
      continue;
    }
    const uint32_t v = f.v;
    dfs.pop_back();
    if (low[v] == v) {  // v roots a component: q's own (v == 0, everything seen) or one without q
      loop = v == 0;
      break;
    }
    low[dfs.back().v] = std::min(low[dfs.back().v], low[v]);
  }
  is_loop_.emplace(q, loop);
  return loop;
}

// What a walk of at most kShortTokenBytes - 1 bytes from q reads, hashed bottom-up over
// (state, bytes left) pairs instead of numbered: the pair (s, 0) is s's finality; (s, r) is
// s's finality, its byte edges each with the hash of (target, r - 1), and its rule edges
// each with the callee's rule_hash() and (target, r - 1) (a callee reads at least one byte,
// so counting its call as one byte keeps more in the key, never less). Equal hashes, equal
// walks of every short token: unlike a numbering, the hash does not tell a loop from a chain
// as long as the bytes within reach, so the body of an unbounded string and a bounded one
// far from its bound agree (Merkle-style, as the hash-consing of a depth-bounded
// unfolding). "B" and the hash, with the context; empty when a callee is recursive.
const std::string& TokenMaskCache::Impl::bounded_signature(uint32_t q) const {
  std::lock_guard lock(canonical_mutex_);
  auto [it, fresh] = bounded_signatures_.try_emplace(q);
  if (!fresh) return it->second;
  // The pairs' hashes do not depend on q: kept from call to call (the successors of one
  // state, and the next position of a string, share nearly all of theirs).
  static constexpr size_t kMaxPairs = size_t{1} << 17;
  constexpr uint32_t kDepth = mask::kShortTokenBytes - 1;
  const GrammarAutomaton& g = *grammar_;
  auto& memo = bounded_memo_;
  if (memo.size() >= kMaxPairs) memo.clear();
  bool failed = false;
  auto node = [&](auto&& self, uint32_t s, uint32_t r) -> std::pair<uint64_t, uint64_t> {
    const uint64_t key = uint64_t{s} << 5 | r;
    if (auto m = memo.find(key); m != memo.end()) return m->second;
    // Every callee hashed first: rule_hash() may grow its table, and a recursive one means
    // no signature.
    for (const auto& e : g.rule_edges(s)) failed = failed || (r > 0 && !rule_hash(e.rule));
    const auto h = merkle_state(
        g, s, r > 0 && !failed, [&](uint32_t t) { return self(self, t, r - 1); },
        [&](uint32_t rule) { return rule_hash_[rule]; });
    memo.emplace(key, h);
    return h;
  };
  const auto h = node(node, q, kDepth);
  if (failed) {  // no signature; the pairs hashed meanwhile may be partial
    memo.clear();
    return it->second;
  }
  std::string& sig = it->second;
  sig.assign(1, 'B');
  Digest128 d;
  d.mix(0x5200 | mask::kShortTokenBytes);
  d.mix(h.first);
  d.mix(h.second);
  d.append_to(sig);
  append_context(sig, g.rule_of(q));
  return sig;
}

// The automaton reachable from q in canonical form (see signature()), into `sig` (left
// empty: no signature, or more than max_states (at most kMaxSignatureStates) states), with
// `tag` mixed first when not 0; states at level `frontier` of the breadth-first numbering
// keep only their finality. True when one of those has edges
// (the automaton goes on past the frontier). Requires canonical_mutex_.
bool TokenMaskCache::Impl::numbered_signature(uint32_t q, uint32_t frontier, uint64_t tag, std::string& sig,
                                              size_t max_states) const {
  const GrammarAutomaton& g = *grammar_;
  max_states = std::min(max_states, kMaxSignatureStates);
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
      if (c.order().size() > max_states) return false;  // too big: no signature
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
    // A callee not hashed yet: every one the walk meets is hashed before it starts over,
    // so it starts over once, not once per callee (a state of a 50,000-word enum reaches
    // thousands of escape rules, and each restart walked up to kMaxSignatureStates states).
    if (!rule_hash(unhashed) || !hash_callees_within(q, frontier, max_states)) return false;
  }
}

bool TokenMaskCache::Impl::hash_callees_within(uint32_t q, uint32_t frontier, size_t max_states) const {
  const GrammarAutomaton& g = *grammar_;
  // The states numbered_signature() visits, breadth-first by the same levels, marked in a
  // scratch of their own (rule_hash() uses the numbering's): a hash set of them was a tenth
  // of a long pattern's first mask.
  if (callee_scan_seen_.size() != g.num_states() || callee_scan_stamp_ == UINT32_MAX) {
    callee_scan_seen_.assign(g.num_states(), 0);
    callee_scan_stamp_ = 0;
  }
  const uint32_t stamp = ++callee_scan_stamp_;
  std::vector<uint32_t> order{q};
  callee_scan_seen_[q] = stamp;
  auto visit = [&](uint32_t s) {
    if (callee_scan_seen_[s] != stamp) {
      callee_scan_seen_[s] = stamp;
      order.push_back(s);
    }
  };
  uint32_t level = 0;
  size_t level_end = 1;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == level_end) {
      ++level;
      level_end = order.size();
    }
    if (order.size() > max_states) return false;
    const uint32_t s = order[i];
    if (level == frontier) continue;
    for (const auto& e : g.byte_edges(s)) visit(e.target);
    for (const auto& e : g.rule_edges(s)) {
      if (!rule_hash(e.rule)) return false;
      visit(e.target);
    }
  }
  return order.size() <= max_states;
}

void TokenMaskCache::Impl::append_context(std::string& key, uint32_t rule) const {
  // FOLLOW of the rule as its four words (keys stay in the process: the bytes' order within
  // a word is the host's, the same for every key), not tested byte by byte (256 tests per
  // key, a thirtieth of a mask that signs hundreds of states).
  const GrammarAutomaton::ByteSet& follow = grammar_->rule_follow(rule);
  key.append(reinterpret_cast<const char*>(follow.data()), sizeof follow);
  const uint64_t vocab = vocabulary_->id();
  key.append(reinterpret_cast<const char*>(&vocab), sizeof vocab);
}

}  // namespace lockstep
