// automata/mask_cache.cpp — see mask_cache.h.
#include "automata/mask_cache.h"

#include "automata/bounded_cache.h"
#include "automata/call_walk.h"
#include "automata/token_bitmask.h"
#include "grammar/hash.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <mutex>
#include <unordered_map>
#include <thread>

namespace lockstep {

// ---------------------------------------------------------------------------------
// TokenSet

TokenSet TokenSet::from_sorted(std::vector<int32_t> ids, size_t universe) {
  TokenSet s;
  s.universe_ = universe;
  s.count_ = ids.size();
  // An id costs 4 bytes, a bitset universe / 8: lists win below universe / 32 members.
  if (ids.size() <= universe / 32) {
    s.form_ = Form::kIds;
    s.ids_ = std::move(ids);
  } else if (universe - ids.size() <= universe / 32) {
    s.form_ = Form::kComplement;
    size_t k = 0;
    for (size_t id = 0; id < universe; ++id) {
      if (k < ids.size() && static_cast<size_t>(ids[k]) == id) {
        ++k;
      } else {
        s.ids_.push_back(static_cast<int32_t>(id));
      }
    }
  } else {
    s.form_ = Form::kBitset;
    s.bits_.assign(bitmask_words(universe), 0);
    for (int32_t id : ids) set_bit(s.bits_, static_cast<size_t>(id));
  }
  s.ids_.shrink_to_fit();
  return s;
}

TokenSet TokenSet::from_bits(std::vector<uint32_t> bits, size_t count, size_t universe) {
  if (count > universe / 32 && universe - count > universe / 32) {
    TokenSet s;
    s.form_ = Form::kBitset;
    s.universe_ = universe;
    s.count_ = count;
    s.bits_ = std::move(bits);
    return s;
  }
  std::vector<int32_t> ids;
  ids.reserve(count);
  for_each_set_bit(bits, [&](size_t id) { ids.push_back(static_cast<int32_t>(id)); });
  return from_sorted(std::move(ids), universe);
}

void TokenSet::or_into(std::span<uint32_t> words) const {
  switch (form_) {
    case Form::kIds:
      for (int32_t id : ids_) set_bit(words, static_cast<size_t>(id));
      break;
    case Form::kBitset:
      for (size_t i = 0; i < bits_.size(); ++i) words[i] |= bits_[i];
      break;
    case Form::kComplement: {
      // All bits of the universe except the listed ones.
      size_t k = 0;
      const size_t n_words = bitmask_words(universe_);
      for (size_t w = 0; w < n_words; ++w) {
        uint32_t bits = w + 1 < n_words ? 0xFFFFFFFFu : last_word_bits(universe_);
        while (k < ids_.size() && static_cast<size_t>(ids_[k] >> 5) == w) {
          bits &= ~(1u << (ids_[k] & 31));
          ++k;
        }
        words[w] |= bits;
      }
      break;
    }
  }
}

bool TokenSet::contains(int32_t id) const {
  switch (form_) {
    case Form::kIds: return std::binary_search(ids_.begin(), ids_.end(), id);
    case Form::kComplement: return !std::binary_search(ids_.begin(), ids_.end(), id);
    case Form::kBitset: return test_bit(bits_, static_cast<size_t>(id));
  }
  return false;
}

size_t StateMask::memory_bytes() const {
  size_t n = sizeof(StateMask) + accepted.memory_bytes() + suffix_common.capacity() * 4;
  for (const auto& s : suffixes) n += sizeof(std::string) + s.capacity();
  for (const auto& t : suffix_tokens) n += sizeof(t) + t.capacity() * 4;
  return n;
}

// ---------------------------------------------------------------------------------
// ConfigurationCache

uint32_t ConfigurationCache::intern(std::vector<uint32_t> desc, uint64_t generation) {
  std::lock_guard lock(mutex_);
  if (generation != generation_.load(std::memory_order_relaxed)) return kNone;
  if (auto it = contexts_.find(desc); it != contexts_.end()) return it->second;
  if (contexts_.size() >= kMaxContexts) {
    contexts_.clear();
    masks_.clear();
    mask_bytes_ = 0;
    generation_.fetch_add(1, std::memory_order_release);
    return kNone;
  }
  const uint32_t id = static_cast<uint32_t>(contexts_.size());
  contexts_.emplace(std::move(desc), id);
  return id;
}

std::shared_ptr<const std::vector<uint32_t>> ConfigurationCache::find(const std::vector<uint32_t>& key,
                                                                      uint64_t generation) const {
  std::lock_guard lock(mutex_);
  if (generation != generation_.load(std::memory_order_relaxed)) return nullptr;
  auto it = masks_.find(key);
  return it == masks_.end() ? nullptr : it->second;
}

void ConfigurationCache::insert(const std::vector<uint32_t>& key, std::vector<uint32_t> mask, uint64_t generation) {
  const size_t size = (key.size() + mask.size()) * sizeof(uint32_t);
  auto stored = std::make_shared<const std::vector<uint32_t>>(std::move(mask));
  std::lock_guard lock(mutex_);
  if (generation != generation_.load(std::memory_order_relaxed)) return;
  if (mask_bytes_ + size > engine_limits().grammar_mask_bytes) {
    masks_.clear();
    mask_bytes_ = 0;
  }
  if (masks_.emplace(key, std::move(stored)).second) mask_bytes_ += size;
}

// ---------------------------------------------------------------------------------
// TokenMaskCache

TokenMaskCache::TokenMaskCache(std::shared_ptr<const CompiledGrammar> grammar,
                               std::shared_ptr<const Vocabulary> vocabulary, ParserLimits limits)
    : grammar_(std::move(grammar)),
      vocabulary_(std::move(vocabulary)),
      limits_(limits),
      masks_(grammar_->num_mask_classes()),
      computing_(grammar_->num_mask_classes(), 0) {
  for (auto& m : masks_) m.store(nullptr, std::memory_order_relaxed);
}

TokenMaskCache::~TokenMaskCache() {
  stop_ = true;
  if (background_.joinable()) background_.join();
}

namespace {

// Masks of states of automaton-only rules, shared by every TokenMaskCache of the process:
// such a state's classification depends only on its automaton, its index there, the rule's
// FOLLOW set and the vocabulary (e.g. "inside an unconstrained JSON string", recurring in
// every schema). Bounded: past EngineLimits::mask_cache_bytes it starts over.
class SharedStateMasks {
 public:
  static SharedStateMasks& instance() {
    static SharedStateMasks cache;
    return cache;
  }
  std::shared_ptr<const StateMask> find(const std::string& key) { return cache_.find(key).value_or(nullptr); }
  /// With `alias`, the mask is stored under another key already and only the key counts.
  void insert(std::string key, std::shared_ptr<const StateMask> mask, bool alias = false) {
    const size_t size = key.size() + (alias ? 0 : mask->memory_bytes());
    cache_.insert(std::move(key), std::move(mask), size);
  }

 private:
  BoundedCache<std::string, std::shared_ptr<const StateMask>> cache_{
      []() -> size_t { return engine_limits().mask_cache_bytes; }};
};

}  // namespace

namespace {

// Where TokenMaskCache::rule_hash() stands for a rule.
enum RuleHashState : uint8_t { kHashUnknown, kHashInProgress, kHashDone, kHashNone };

using Digest = Digest128;  // grammar/hash.h

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
  /// The number of state `s`, numbering it next when it is new.
  uint32_t number(uint32_t s) {
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
  Digest digest_;
};

}  // namespace

std::shared_ptr<const StateMask> TokenMaskCache::compute_shared(uint32_t state) {
  const CompiledGrammar& g = *grammar_;
  const uint32_t r = g.rule_of(state);
  const auto& automaton = g.rule_automaton_key(r);
  if (automaton.empty()) {
    // A state of a grammar rule: shared by the canonical signature of everything its walk
    // can reach (the member rules of JSON Schemas recur across schemas by the thousand).
    std::string key = network_signature(state);
    if (key.empty()) {
      ++computations_;
      return compute(state);
    }
    if (auto hit = SharedStateMasks::instance().find(key)) {
      ++shared_hits_;
      return hit;
    }
    ++computations_;
    auto mask = compute(state);
    SharedStateMasks::instance().insert(std::move(key), mask);
    return mask;
  }
  std::string key;
  auto put = [&key](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
  if (const std::string& sig = signature(state); !sig.empty()) {
    // The reachable automaton's canonical signature (with FOLLOW and the vocabulary): the
    // mask is shared with every isomorphic state of any automaton, e.g. the body of a string
    // after an excluded key's prefix, the last positions of any length bound.
    key.push_back('S');
    key.append(sig);
  } else {
    key.push_back('A');
    const uint32_t local = state - g.rule_start(r);
    put(&local, sizeof local);
    append_context(key, r);
    put(automaton.data(), automaton.size() * sizeof(uint32_t));
  }
  key.push_back(g.can_end_after(r) ? '1' : '0');
  if (auto hit = SharedStateMasks::instance().find(key)) {
    ++shared_hits_;
    return hit;
  }
  ++computations_;
  auto mask = compute(state);
  // compute() stored it under the key of its walk's parts already: counted once.
  SharedStateMasks::instance().insert(std::move(key), mask, /*alias=*/true);
  return mask;
}

// The recursive transition network a walk from `q` (a grammar rule's state) can reach: the
// states of q's rule reachable from q, numbered breadth-first (byte edges in order, then rule
// edges), each with its finality, and the rules called, each named by a structural hash of
// its automaton and its own callees (rule_hash()). The token classification of q is a
// function of this structure, FOLLOW of q's rule, whether the output may end after it, the
// vocabulary and the parser limits; all of them hashed to 128 bits make the key. Where a
// callee is recursive, the network is numbered as one graph instead (network_bfs(), up to
// kMaxNetworkStates states, else no key).
std::string TokenMaskCache::network_signature(uint32_t q) const {
  const CompiledGrammar& g = *grammar_;
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
const std::pair<uint64_t, uint64_t>* TokenMaskCache::rule_hash(uint32_t rule) const {
  const CompiledGrammar& g = *grammar_;
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
std::pair<uint64_t, uint64_t> TokenMaskCache::hash_within_rule(uint32_t start, uint32_t tag) const {
  const CompiledGrammar& g = *grammar_;
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
std::string TokenMaskCache::network_bfs(uint32_t q) const {
  static constexpr size_t kMaxNetworkStates = 1024;
  const CompiledGrammar& g = *grammar_;
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

void TokenMaskCache::start_background_precompute() {
  if (background_.joinable()) return;
  background_ = std::thread([this] {
    for (uint32_t c = 0; c < masks_.size() && !stop_; ++c) {
      try {
        get(grammar_->mask_class_state(c));
      } catch (...) {
        // get() on the decode path will raise it again where it matters.
      }
    }
  });
}

const StateMask& TokenMaskCache::get(uint32_t state) { return *lookup(state, true); }

const StateMask* TokenMaskCache::lookup(uint32_t state, bool wait) {
  const uint32_t c = grammar_->mask_class(state);
  if (const StateMask* m = masks_[c].load(std::memory_order_acquire)) return m;
  {
    std::unique_lock lock(mutex_);
    if (!wait && computing_[c]) return nullptr;
    done_.wait(lock, [&] { return !computing_[c]; });
    if (const StateMask* m = masks_[c].load(std::memory_order_acquire)) return m;
    computing_[c] = 1;
  }
  const StateMask* computed = nullptr;
  try {
    std::shared_ptr<const StateMask> m = compute_shared(grammar_->mask_class_state(c));
    computed = m.get();
    std::lock_guard lock(mutex_);
    owned_.push_back(std::move(m));
  } catch (...) {
    std::lock_guard lock(mutex_);
    computing_[c] = 0;
    done_.notify_all();
    throw;
  }
  {
    std::lock_guard lock(mutex_);
    masks_[c].store(computed, std::memory_order_release);
    computing_[c] = 0;
  }
  done_.notify_all();
  return computed;
}

void TokenMaskCache::precompute(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<uint32_t> next{0};
  const uint32_t n = grammar_->num_mask_classes();
  auto work = [&] {
    for (uint32_t c; (c = next.fetch_add(1)) < n;) get(grammar_->mask_class_state(c));
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

TokenMaskCache::Stats TokenMaskCache::stats() const {
  Stats s;
  s.states = masks_.size();
  s.computations = computations_.load();
  s.shared = shared_hits_.load();
  for (const auto& m : masks_) {
    const StateMask* p = m.load(std::memory_order_acquire);
    if (!p) continue;
    ++s.computed;
    s.memory_bytes += p->memory_bytes();
    s.compute_seconds += p->compute_us * 1e-6;
    s.uncertain_tokens += p->uncertain_tokens;
  }
  {
    std::lock_guard lock(segments_mutex_);
    s.segment_bytes = segment_entries_ * sizeof(int32_t);
  }
  return s;
}

namespace {

// The trie walk for one state. A path (the bytes of a token prefix) is followed in one of
// two modes. Stack mode: while the grammar is deterministic along the path (at each byte at
// most one way to go, as JSON and most grammars are), the parse is one stack of automaton
// states — the seed's rule at the bottom, a sub-rule entered through a rule edge above the
// state it returns to — kept as nodes of a parent-linked arena, one top node per depth.
// Earley mode: from the first byte with several ways to go, an Earley parser in boundary
// mode (seeded with the seed state and replaying the path) carries the path; it is left
// when the walk backs out above that depth. Both record the depths at which the seed's rule
// can complete (boundaries).
class StateWalker {
 public:
  StateWalker(const CompiledGrammar& g, ParserLimits limits, uint32_t seed, size_t max_depth,
              bool skip_seed_rules)
      : g_(g), parser_(g, limits, seed), seed_(seed), skip_seed_rules_(skip_seed_rules), top_(max_depth + 2),
        arena_(max_depth + 2), bytes_(max_depth + 2), boundaries_(max_depth + 2) {
    nodes_.reserve(4 * max_depth + 16);
    nodes_.push_back({seed, kNone, g.is_final(seed)});
    top_[0] = 0;
    arena_[0] = 1;
    boundaries_[0] = 0;  // a completion before any byte is the context's business
  }

  size_t depth() const { return depth_; }
  /// Boundaries (completions of the seed's rule) at depths 1..d of the current path.
  uint32_t boundaries_upto(size_t d) const { return boundaries_[d]; }
  bool boundary_at(size_t d) const { return boundaries_[d] != boundaries_[d - 1]; }

  void back_to(size_t d) {
    if (d >= depth_) return;
    if (earley_from_ != kNone) {
      if (d >= earley_from_) {
        parser_.rollback(depth_ - d);
        depth_ = d;
        return;
      }
      earley_from_ = kNone;
    }
    depth_ = d;
    nodes_.resize(arena_[d]);
  }

  bool advance(uint8_t byte) {
    if (earley_from_ == kNone) {
      const uint32_t n = top_[depth_];
      const Node node = nodes_[n];
      uint32_t next;
      if ((n == 0 && skip_seed_rules_) ||
          (g_.rule_edges(node.state).empty() && (node.parent == kNone || !g_.is_final(node.state)))) {
        // One frame that can only read a byte: a plain DFA step.
        const uint32_t target = byte_target(node.state, byte);
        if (target == kNone) return false;
        next = push(target, node.parent);
      } else {
        moves_.clear();
        ambiguous_ = false;
        step(n, byte, 0);
        if (moves_.empty() && !ambiguous_) {
          nodes_.resize(arena_[depth_]);
          return false;
        }
        if (ambiguous_) return start_earley(byte);
        next = moves_[0];
      }
      ++depth_;
      top_[depth_] = next;
      arena_[depth_] = static_cast<uint32_t>(nodes_.size());
      bytes_[depth_] = byte;
      boundaries_[depth_] = boundaries_[depth_ - 1] + (nodes_[next].all_final ? 1 : 0);
      return true;
    }
    if (!parser_.advance(byte)) return false;
    ++depth_;
    bytes_[depth_] = byte;
    boundaries_[depth_] = boundaries_[depth_ - 1] + (parser_.boundary_at(depth_) ? 1 : 0);
    return true;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr int kMaxEnter = 32;  // nested rule entries within one byte step
  struct Node {
    uint32_t state;
    uint32_t parent;  // the node to return to when this frame's rule completes
    bool all_final;   // this frame and every frame below it can complete here
  };

  uint32_t byte_target(uint32_t state, uint8_t byte) const {
    for (const auto& e : g_.byte_edges(state)) {
      if (byte < e.lo) return kNone;
      if (byte <= e.hi) return e.target;
    }
    return kNone;
  }

  uint32_t push(uint32_t state, uint32_t parent) {
    const bool all_final = g_.is_final(state) && (parent == kNone || nodes_[parent].all_final);
    nodes_.push_back({state, parent, all_final});
    return static_cast<uint32_t>(nodes_.size() - 1);
  }

  // Several ways to go: the Earley parser takes over from here, replaying the path.
  bool start_earley(uint8_t byte) {
    nodes_.resize(arena_[depth_]);
    parser_.reset_to_state(seed_);
    for (size_t i = 1; i <= depth_; ++i) {
      if (!parser_.advance(bytes_[i])) throw std::logic_error("mask walk: replay failed");
    }
    earley_from_ = depth_;
    if (!parser_.advance(byte)) return false;
    ++depth_;
    bytes_[depth_] = byte;
    boundaries_[depth_] = boundaries_[depth_ - 1] + (parser_.boundary_at(depth_) ? 1 : 0);
    return true;
  }

  // Every way to read `byte` from the stack topped by node n: a byte edge, entering a
  // sub-rule through a rule edge, or (the frame's rule being final) returning to the parent.
  void step(uint32_t n, uint8_t byte, int entered) {
    if (ambiguous_) return;
    const Node node = nodes_[n];
    const uint32_t target = byte_target(node.state, byte);
    if (target != kNone) add_move(push(target, node.parent));
    const auto rules = g_.rule_edges(node.state);
    if (!rules.empty() && !(n == 0 && skip_seed_rules_)) {
      if (entered >= kMaxEnter) {
        ambiguous_ = true;
        return;
      }
      for (const auto& r : rules) {
        // A callee whose FIRST set lacks the byte cannot read it: when it is nullable, the
        // byte is read past it (as its start state would return at once), else not at all.
        if (!((g_.rule_first(r.rule)[byte >> 6] >> (byte & 63)) & 1)) {
          if (g_.rule_nullable(r.rule)) step(push(r.target, node.parent), byte, entered + 1);
          continue;
        }
        const uint32_t back = push(r.target, node.parent);
        step(push(g_.rule_start(r.rule), back), byte, entered + 1);
      }
    }
    if (node.parent != kNone && g_.is_final(node.state)) step(node.parent, byte, entered);
  }

  void add_move(uint32_t n) {
    for (uint32_t m : moves_) {
      if (same_stack(m, n)) return;
    }
    moves_.push_back(n);
    if (moves_.size() > 1) ambiguous_ = true;
  }

  bool same_stack(uint32_t a, uint32_t b) const {
    while (a != kNone && b != kNone) {
      if (nodes_[a].state != nodes_[b].state) return false;
      a = nodes_[a].parent, b = nodes_[b].parent;
    }
    return a == b;
  }

  const CompiledGrammar& g_;
  EarleyParser parser_;
  uint32_t seed_;
  bool skip_seed_rules_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> top_;         // stack mode: top node per depth
  std::vector<uint32_t> arena_;       // stack mode: nodes_.size() after each depth
  std::vector<uint8_t> bytes_;        // the path: bytes_[d] was read to reach depth d
  std::vector<uint32_t> boundaries_;  // prefix counts of boundary depths
  std::vector<uint32_t> moves_;
  bool ambiguous_ = false;
  size_t depth_ = 0;
  size_t earley_from_ = kNone;  // depth from which the Earley parser carries the path
};

}  // namespace

// A state's classification while it is being assembled from parts.
struct PartialMask {
  std::vector<uint32_t> accepted;                          // bitmask words
  // (token, offset): the token is allowed iff the context accepts its bytes from offset on.
  std::vector<std::pair<int32_t, uint32_t>> uncertain;
};

// The walk of the sorted vocabulary from a state of an automaton-only rule (no rule
// edges anywhere in it): a plain DFA walk with a dense 256-entry table per visited state.
// One first-byte segment of a walk from a state of an automaton-only rule: the tokens that
// start with byte b, read on from the state s1 that b leads to. It depends on (s1, b) only,
// so states that share successors (the trie of an excluded key, the loop of a pattern)
// share their segments.
struct TokenMaskCache::Segment {
  // With `complement`, the accepted tokens are the segment's tokens but `ids`; else `ids`.
  bool complement = false;
  std::vector<int32_t> ids;  // sorted
  std::vector<std::pair<int32_t, uint32_t>> uncertain;
  std::pair<uint64_t, uint64_t> digest;  // of the above: equal segments, equal digests
};

namespace {

// Segments whose successor state has a canonical signature, shared by every TokenMaskCache
// of the process: a segment depends only on the automaton reachable from its successor
// state, the rule's FOLLOW set, the byte and the vocabulary. The generic string body of one
// schema serves the key strings, patterns and bounded strings of all later ones. Bounded:
// past kMaxEntries token entries it starts over.
class SharedSegments {
 public:
  // The segments of one successor signature, by first byte.
  using Row = std::array<std::shared_ptr<const void>, 256>;
  static SharedSegments& instance() {
    static SharedSegments cache;
    return cache;
  }
  /// The row of `signature`, made empty when new.
  std::shared_ptr<Row> row(const std::string& signature) {
    std::lock_guard lock(mutex_);
    auto& slot = map_[signature];
    if (!slot) slot = std::make_shared<Row>();
    return slot;
  }
  template <class Segment>
  std::shared_ptr<const Segment> get(const Row& row, uint8_t byte) {
    std::lock_guard lock(mutex_);
    return std::static_pointer_cast<const Segment>(row[byte]);
  }
  void put(Row& row, uint8_t byte, std::shared_ptr<const void> segment, size_t entries) {
    std::lock_guard lock(mutex_);
    if (entries_ + entries > kMaxEntries) {
      map_.clear();  // rows still held by walks stay valid, detached
      entries_ = 0;
    }
    if (!row[byte]) {
      row[byte] = std::move(segment);
      entries_ += entries;
    }
  }

 private:
  static constexpr size_t kMaxEntries = size_t{32} << 20;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<Row>> map_;
  size_t entries_ = 0;
};

}  // namespace

// The automaton reachable from `q` (an automaton-only rule's state) in a canonical form —
// states numbered in breadth-first order along sorted byte edges, then rule edges (a JSON
// string's surrogate pairs), which for a minimal DFA names it up to isomorphism — hashed to
// 128 bits, with the rule's FOLLOW set. A rule edge names its callee by rule_hash(). Empty
// when more than kMaxSignatureStates states are reachable.
const std::string& TokenMaskCache::signature(uint32_t q) const {
  // Up to a bounded string of ~128 code points (a JSON string automaton spends ~14 states on
  // a code point): their positions then share masks across every length bound.
  static constexpr size_t kMaxSignatureStates = 2048;
  std::lock_guard lock(canonical_mutex_);
  auto [it, fresh] = signatures_.try_emplace(q);
  if (!fresh) return it->second;
  const CompiledGrammar& g = *grammar_;
  // A callee not hashed yet is hashed outside the walk (rule_hash() uses the same scratch),
  // and the walk starts over.
  for (uint32_t unhashed = UINT32_MAX;; unhashed = UINT32_MAX) {
    CanonicalNumbering c(canonical_index_, canonical_order_, canonical_stamps_, g.num_states(), q);
    for (size_t i = 0; i < c.order().size() && unhashed == UINT32_MAX; ++i) {
      if (c.order().size() > kMaxSignatureStates) return it->second;  // too big: no signature
      const uint32_t s = c.order()[i];
      c.mix(g.is_final(s) ? 0xF1 : 0xF0);
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
      std::string& sig = it->second;
      c.append_hash(sig);
      append_context(sig, g.rule_of(q));
      return sig;
    }
    if (!rule_hash(unhashed)) return it->second;  // a recursive callee: no signature
  }
}

void TokenMaskCache::append_context(std::string& key, uint32_t rule) const {
  const CompiledGrammar& g = *grammar_;
  for (unsigned b = 0; b < 256; b += 8) {
    uint8_t bits = 0;
    for (unsigned k = 0; k < 8; ++k) bits |= static_cast<uint8_t>(g.can_follow(rule, static_cast<uint8_t>(b + k)) << k);
    key.push_back(static_cast<char>(bits));
  }
  const uint64_t vocab = vocabulary_->id();
  key.append(reinterpret_cast<const char*>(&vocab), sizeof vocab);
}

const TokenMaskCache::ByteClasses& TokenMaskCache::byte_classes(uint32_t rule) const {
  std::lock_guard lock(byte_classes_mutex_);
  auto& slot = byte_classes_[rule];
  if (!slot) {
    // Bytes b and b + 1 share a class unless some edge of the rule starts at b + 1 or ends
    // at b: then every edge reads whole classes.
    const CompiledGrammar& g = *grammar_;
    const uint32_t begin = g.rule_start(rule);
    std::array<bool, 257> cut{};
    auto c = std::make_unique<ByteClasses>();
    std::vector<uint32_t> callees;  // a JSON string's surrogate-pair rules (json_escapes.h)
    for (uint32_t q = begin; q < g.rule_end(rule); ++q) {
      for (const auto& e : g.byte_edges(q)) cut[e.lo] = cut[e.hi + 1u] = true;
      for (const auto& e : g.rule_edges(q)) {
        if (std::find(callees.begin(), callees.end(), e.rule) != callees.end()) continue;
        callees.push_back(e.rule);
        c->calls_walkable = c->calls_walkable && !g.rule_nullable(e.rule);
        for (uint32_t s = g.rule_start(e.rule); s < g.rule_end(e.rule); ++s) {
          c->calls_walkable = c->calls_walkable && g.rule_edges(s).empty();
        }
      }
    }
    uint32_t n = 0;
    for (unsigned b = 0; b < 256; ++b) {
      if (b > 0 && cut[b]) ++n;
      c->of[b] = static_cast<uint8_t>(n);
    }
    c->count = n + 1;
    slot = std::move(c);
  }
  return *slot;
}

std::shared_ptr<const StateMask> TokenMaskCache::walk_automaton(uint32_t state, PartialMask& out,
                                                                std::string& parts_key) const {
  const CompiledGrammar& g = *grammar_;
  const Vocabulary& vocab = *vocabulary_;
  const uint32_t rule = g.rule_of(state);
  const uint32_t base = g.rule_start(rule);
  constexpr uint32_t kNone = UINT32_MAX;
  // Dense tables over the rule's byte classes, built on first visit: entry = target |
  // kFinalBit when the target is final, kNone without a transition. Classes keep a state's
  // table a few dozen entries (a JSON string automaton tells apart ~30 kinds of bytes), so
  // the tables of a whole walk stay in cache. Rows are cut from chunks that never move, so
  // each depth of the walk holds its state's row.
  // kCall: a byte a callee may read (an escaped surrogate pair's rule): the token's rest is
  // read by walk_with_calls.
  constexpr uint32_t kFinalBit = 0x80000000u, kCall = kNone - 1;
  const ByteClasses& classes = byte_classes(rule);
  const uint32_t n_classes = classes.count;
  std::vector<const uint32_t*> table_of(g.rule_end(rule) - base, nullptr);
  constexpr size_t kChunk = 16384;  // entries; >= 256, so a row always fits in a fresh chunk
  std::vector<std::unique_ptr<uint32_t[]>> chunks;
  size_t chunk_used = kChunk;
  auto build_table = [&](uint32_t q) -> const uint32_t* {
    if (chunk_used + n_classes > kChunk) {
      chunks.push_back(std::make_unique_for_overwrite<uint32_t[]>(kChunk));
      chunk_used = 0;
    }
    uint32_t* row = chunks.back().get() + chunk_used;
    chunk_used += n_classes;
    std::fill_n(row, n_classes, kNone);
    for (const auto& e : g.byte_edges(q)) {
      const uint32_t entry = e.target | (g.is_final(e.target) ? kFinalBit : 0u);
      for (unsigned c = classes.of[e.lo]; c <= classes.of[e.hi]; ++c) row[c] = entry;
    }
    for (const auto& e : g.rule_edges(q)) {
      const auto& first = g.rule_first(e.rule);
      for (unsigned b = 0; b < 256; ++b) {
        if ((first[b >> 6] >> (b & 63)) & 1) row[classes.of[b]] = kCall;
      }
    }
    return table_of[q - base] = row;
  };
  auto table = [&](uint32_t q) -> const uint32_t* {
    const uint32_t* t = table_of[q - base];
    return t ? t : build_table(q);
  };
  const size_t max_depth = vocab.max_token_bytes() + 1;
  std::vector<uint32_t> states(max_depth + 1), boundaries(max_depth + 1, 0);
  const auto sorted = vocab.sorted_text_tokens();
  const auto common = vocab.sorted_common_prefix();
  struct {
    std::vector<int32_t> accepted;
    std::vector<int32_t> others;  // the segment's tokens not accepted
    std::vector<std::pair<int32_t, uint32_t>> uncertain;
  } seg;  // the segment being walked
  auto classify_failed = [&](int32_t id, std::string_view bytes, size_t failed_at) {
    bool any = false;
    if (boundaries[failed_at] == 0) return false;
    for (size_t j = 1; j <= failed_at; ++j) {
      if (boundaries[j] == boundaries[j - 1] || !g.can_follow(rule, static_cast<uint8_t>(bytes[j]))) continue;
      seg.uncertain.emplace_back(id, static_cast<uint32_t>(j));
      any = true;
    }
    return any;
  };
  // The walk of sorted tokens [lo, hi), which share their first byte, into `seg`.
  auto walk_segment = [&](size_t lo, size_t hi) {
    size_t depth = 0, dead = 0;
    bool dead_uncertain = false;
    for (size_t i = lo; i < hi; ++i) {
      const int32_t id = sorted[i];
      const std::string_view bytes = vocab.sorted_bytes(i);
      if (dead != 0 && common[i] >= dead) {
        if (!dead_uncertain) {
          const size_t end = vocab.sorted_prefix_end(i, dead);
          seg.others.insert(seg.others.end(), sorted.begin() + static_cast<ptrdiff_t>(i),
                            sorted.begin() + static_cast<ptrdiff_t>(end));
          i = end - 1;
        } else {
          seg.others.push_back(id);
          classify_failed(id, bytes, dead - 1);
        }
        continue;
      }
      dead = 0;
      depth = std::min<size_t>(depth, i == lo ? 0 : common[i]);
      size_t end = std::string_view::npos;  // after a call: how far the token was read (states[] stop at depth)
      while (depth < bytes.size()) {
        const uint32_t* t = table_of[states[depth] - base];
        if (!t) [[unlikely]] t = build_table(states[depth]);
        const uint32_t entry = t[classes.of[static_cast<uint8_t>(bytes[depth])]];
        if (entry >= kCall) [[unlikely]] {
          if (entry == kCall) end = walk_with_calls(g, states[depth], bytes, depth, boundaries.data());
          break;
        }
        states[depth + 1] = entry & ~kFinalBit;
        boundaries[depth + 1] = boundaries[depth] + (entry >> 31);
        ++depth;
      }
      if (end == std::string_view::npos) end = depth;
      if (end == bytes.size()) {
        seg.accepted.push_back(id);
      } else {
        seg.others.push_back(id);
        dead = end + 1;
        dead_uncertain = classify_failed(id, bytes, end);
      }
    }
  };
  struct Part {
    size_t lo, hi;
    std::shared_ptr<const Segment> segment;
  };
  std::vector<Part> parts;
  std::vector<std::pair<uint32_t, std::shared_ptr<SharedSegments::Row>>> rows;  // by successor
  size_t complement_tokens = 0;
  states[0] = state;
  const uint32_t* first = table(state);
  for (size_t lo = 0; lo < sorted.size();) {
    const std::string_view bytes = vocab.sorted_bytes(lo);
    const size_t hi = bytes.empty() ? lo + 1 : vocab.sorted_prefix_end(lo, 1);
    const uint32_t e1 = bytes.empty() ? kNone : first[classes.of[static_cast<uint8_t>(bytes[0])]];
    const uint32_t s1 = e1 == kNone ? kNone : e1 & ~kFinalBit;
    if (s1 == kNone) {  // every token of the segment fails at its first byte: rejected
      lo = hi;
      continue;
    }
    const uint8_t b = static_cast<uint8_t>(bytes[0]);
    const uint64_t key = static_cast<uint64_t>(s1) << 8 | b;
    // The shared row of s1's signature (or none: no signature), once per successor.
    SharedSegments::Row* row = nullptr;
    {
      auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.first == s1; });
      if (it == rows.end()) {
        const std::string& sig = signature(s1);
        rows.emplace_back(s1, sig.empty() ? nullptr : SharedSegments::instance().row(sig));
        it = rows.end() - 1;
      }
      row = it->second.get();
    }
    std::shared_ptr<const Segment> hit;
    if (row) {
      hit = SharedSegments::instance().get<Segment>(*row, b);
    } else {
      std::lock_guard lock(segments_mutex_);
      if (auto it = segments_.find(key); it != segments_.end()) hit = it->second;
    }
    if (!hit) {
      seg.accepted.clear();
      seg.others.clear();
      seg.uncertain.clear();
      walk_segment(lo, hi);
      auto made = std::make_shared<Segment>();
      if (seg.accepted.size() * 2 > hi - lo) {  // mostly accepted: keep the others
        made->complement = true;
        made->ids = seg.others;
      } else {
        made->ids = seg.accepted;
      }
      made->uncertain = seg.uncertain;
      Digest d;
      d.mix(made->complement);
      for (const int32_t id : made->ids) d.mix(static_cast<uint32_t>(id));
      d.mix(UINT64_MAX);
      for (const auto& [id, offset] : made->uncertain) d.mix(static_cast<uint64_t>(id) << 32 | offset);
      made->digest = d.value();
      std::shared_ptr<const Segment> stored = std::move(made);
      const size_t size = stored->ids.size() + 2 * stored->uncertain.size() + 1;
      if (row) {
        SharedSegments::instance().put(*row, b, stored, size);
      } else {
        std::lock_guard lock(segments_mutex_);
        if (segment_entries_ + size > kMaxSegmentEntries) {
          segments_.clear();
          segment_entries_ = 0;
        }
        segments_.emplace(key, stored);
        segment_entries_ += size;
      }
      hit = std::move(stored);
    }
    out.uncertain.insert(out.uncertain.end(), hit->uncertain.begin(), hit->uncertain.end());
    if (hit->complement) complement_tokens += hi - lo;
    parts.push_back({lo, hi, std::move(hit)});
    lo = hi;
  }
  // The mask is a function of the parts alone: states whose segments are equal share it
  // even when their automata differ beyond what any token reads (the body of a string
  // whose excluded keys no token spells is the plain string body).
  {
    Digest d;
    for (const Part& p : parts) {
      d.mix(p.lo << 32 | p.hi);
      d.mix(p.segment->digest.first);
      d.mix(p.segment->digest.second);
    }
    parts_key.assign(1, 'P');
    d.append_to(parts_key);
    const uint64_t id = vocab.id();
    parts_key.append(reinterpret_cast<const char*>(&id), sizeof id);
    if (auto hit = SharedStateMasks::instance().find(parts_key)) return hit;
  }
  // Mostly accepted (a string body): start from every text token and take out the
  // segments that are not, then the exceptions; else set the accepted ones.
  out.accepted.assign(vocab.bitmask_words(), 0);
  auto set = [&](int32_t id) { set_bit(out.accepted, static_cast<size_t>(id)); };
  if (complement_tokens * 2 > sorted.size()) {
    std::vector<uint32_t> bits = all_text_bits();
    auto clear = [&](int32_t id) { clear_bit(bits, static_cast<size_t>(id)); };
    size_t covered = 0;  // sorted tokens [0, covered) handled
    for (const Part& p : parts) {
      for (size_t i = covered; i < p.lo; ++i) clear(sorted[i]);  // segments failing at byte 0
      covered = p.hi;
      if (p.segment->complement) {
        for (const int32_t id : p.segment->ids) clear(id);
      } else {
        for (size_t i = p.lo; i < p.hi; ++i) clear(sorted[i]);
        for (const int32_t id : p.segment->ids) set_bit(bits, static_cast<size_t>(id));
      }
    }
    for (size_t i = covered; i < sorted.size(); ++i) clear(sorted[i]);
    for (size_t w = 0; w < bits.size(); ++w) out.accepted[w] |= bits[w];
  } else {
    for (const Part& p : parts) {
      if (!p.segment->complement) {
        for (const int32_t id : p.segment->ids) set(id);
        continue;
      }
      // The segment's tokens are its own (first bytes differ): set them all, clear the others.
      for (size_t i = p.lo; i < p.hi; ++i) set(sorted[i]);
      for (const int32_t id : p.segment->ids) clear_bit(out.accepted, static_cast<size_t>(id));
    }
  }
  return nullptr;
}

std::vector<uint32_t> TokenMaskCache::all_text_bits() const {
  std::call_once(all_text_once_, [this] {
    all_text_.assign(vocabulary_->bitmask_words(), 0);
    for (const int32_t id : vocabulary_->sorted_text_tokens()) set_bit(all_text_, static_cast<size_t>(id));
  });
  return all_text_;
}

// The walk of the sorted vocabulary from `state` (see StateWalker), into `out`. With
// `skip_seed_rules`, the seed's own rule edges are not entered (compose() covers them).
void TokenMaskCache::walk_vocabulary(uint32_t state, bool skip_seed_rules, PartialMask& out) const {
  const CompiledGrammar& g = *grammar_;
  const Vocabulary& vocab = *vocabulary_;
  const uint32_t rule = g.rule_of(state);
  StateWalker w(g, limits_, state, vocab.max_token_bytes(), skip_seed_rules);
  const auto sorted = vocab.sorted_text_tokens();
  const auto common = vocab.sorted_common_prefix();

  // A token that fails after `failed_at` bytes is uncertain through every earlier depth at
  // which the rule can complete and whose next byte can follow the rule. Those depths and
  // bytes lie in the failed prefix, so the answer is the same for every token sharing it.
  auto classify_failed = [&](int32_t id, std::string_view bytes, size_t failed_at) {
    bool any = false;
    for (size_t j = 1; j <= failed_at && w.boundaries_upto(failed_at) != 0; ++j) {
      if (!w.boundary_at(j) || !g.can_follow(rule, static_cast<uint8_t>(bytes[j]))) continue;
      out.uncertain.emplace_back(id, static_cast<uint32_t>(j));
      any = true;
    }
    return any;
  };

  size_t dead = 0;  // length of a rejected prefix of the current path, or 0
  bool dead_uncertain = false;  // tokens with that prefix are uncertain
  for (size_t i = 0; i < sorted.size(); ++i) {
    const int32_t id = sorted[i];
    const std::string_view bytes = vocab.sorted_bytes(i);
    if (dead != 0 && common[i] >= dead) {
      if (!dead_uncertain) {
        // Every token with this prefix is rejected: skip the run.
        i = vocab.sorted_prefix_end(i, dead) - 1;
      } else {
        classify_failed(id, bytes, dead - 1);
      }
      continue;
    }
    dead = 0;
    w.back_to(std::min<size_t>(w.depth(), common[i]));
    while (w.depth() < bytes.size() && w.advance(static_cast<uint8_t>(bytes[w.depth()]))) {
    }
    if (w.depth() == bytes.size()) {
      set_bit(out.accepted, static_cast<size_t>(id));
    } else {
      dead = w.depth() + 1;
      dead_uncertain = classify_failed(id, bytes, w.depth());
    }
  }
}

// A state q with rule edges, from its parts: what its byte edges read (a walk that does not
// enter q's rule edges), and for each rule edge (A → t): the mask of A's start state — its
// accepted tokens stay inside A, its uncertain suffixes are read on from t — and, A being
// nullable, the mask of t. The walk over the whole vocabulary through A (the costly part,
// e.g. every token inside a JSON string) is then done once for A, not once per caller.
// Only for sub-rules that do not call back into q's rule (another component of the call
// graph). Returns false (nothing written) when q does not qualify.
bool TokenMaskCache::compose(uint32_t state, PartialMask& out) {
  const CompiledGrammar& g = *grammar_;
  const uint32_t rule = g.rule_of(state);
  const auto edges = g.rule_edges(state);
  if (edges.empty()) return false;
  // Worth it only when some sub-rule starts with many bytes (a string body): a narrow one
  // (whitespace, a keyword) is cheaper to walk through directly.
  bool broad = false;
  for (const auto& e : edges) {
    unsigned first = 0;
    for (const uint64_t w : g.rule_first(e.rule)) first += static_cast<unsigned>(std::popcount(w));
    broad = broad || first >= 64;
  }
  if (!broad) return false;
  for (const auto& e : edges) {
    if (g.rule_component(e.rule) == g.rule_component(rule)) return false;
    if (g.rule_nullable(e.rule) && (e.target == state || g.rule_edges(e.target).size() > 0)) return false;
  }
  // The sub-rules' masks first. A mask being computed (by this thread further up, or by
  // another) is not waited for: this state then takes the plain walk, so no two
  // computations ever wait on each other.
  std::vector<const StateMask*> subs;
  for (const auto& e : edges) {
    const StateMask* m = lookup(g.rule_start(e.rule), false);
    if (!m) return false;
    subs.push_back(m);
  }
  walk_vocabulary(state, true, out);
  const Vocabulary& vocab = *vocabulary_;
  for (size_t x = 0; x < edges.size(); ++x) {
    const auto& e = edges[x];
    const StateMask& sub = *subs[x];
    sub.accepted.or_into(out.accepted);
    // Suffixes after A completes, read on from t (a walk over the sorted suffixes).
    StateWalker w(g, limits_, e.target, vocab.max_token_bytes(), false);
    const bool t_final = g.is_final(e.target);
    for (size_t k = 0; k < sub.suffixes.size(); ++k) {
      const std::string& sfx = sub.suffixes[k];
      w.back_to(std::min<size_t>(w.depth(), sub.suffix_common[k]));
      while (w.depth() < sfx.size() && w.advance(static_cast<uint8_t>(sfx[w.depth()]))) {
      }
      const auto& tokens = sub.suffix_tokens[k];
      if (w.depth() == sfx.size()) {
        for (int32_t id : tokens) set_bit(out.accepted, static_cast<size_t>(id));
        continue;
      }
      const size_t failed_at = w.depth();
      for (size_t j = 0; j <= failed_at; ++j) {
        const bool boundary = j == 0 ? t_final : w.boundary_at(j);
        if (!boundary || !g.can_follow(rule, static_cast<uint8_t>(sfx[j]))) continue;
        for (int32_t id : tokens) {
          out.uncertain.emplace_back(id, static_cast<uint32_t>(vocab.token_bytes(id).size() - (sfx.size() - j)));
        }
      }
    }
    if (g.rule_nullable(e.rule)) walk_vocabulary(e.target, false, out);  // A skipped: read from t
  }
  return true;
}

std::shared_ptr<const StateMask> TokenMaskCache::compute(uint32_t state) {
  const auto t0 = std::chrono::steady_clock::now();
  const Vocabulary& vocab = *vocabulary_;
  PartialMask part;
  std::string parts_key;
  const uint32_t rule = grammar_->rule_of(state);
  // An automaton-only rule's state takes the table walk, unless it calls a rule itself (after
  // "\uD" in a JSON string: it is walked like any grammar state).
  if (!grammar_->rule_automaton_key(rule).empty() && grammar_->rule_edges(state).empty() &&
      byte_classes(rule).calls_walkable) {
    if (auto hit = walk_automaton(state, part, parts_key)) return hit;  // no bitmask made
  } else {
    part.accepted.assign(vocab.bitmask_words(), 0);
    if (!compose(state, part)) walk_vocabulary(state, false, part);
  }
  auto out = std::make_shared<StateMask>();
  const size_t accepted = count_bits(part.accepted);  // no popcnt instruction on baseline x86-64
  auto& uncertain = part.uncertain;
  // A token allowed in every context needs no suffix check.
  uncertain.erase(std::remove_if(uncertain.begin(), uncertain.end(),
                                 [&](const auto& u) { return test_bit(part.accepted, static_cast<size_t>(u.first)); }),
                  uncertain.end());
  auto suffix = [&](const std::pair<int32_t, uint32_t>& u) { return vocab.token_bytes(u.first).substr(u.second); };
  {
    // Sorted by suffix, then token: compared on their first 8 bytes packed into one
    // integer (suffixes are mostly that short), the rest only on a tie.
    struct Key {
      uint64_t head;
      uint32_t len;
      int32_t id;
      uint32_t offset;
    };
    std::vector<Key> keys;
    keys.reserve(uncertain.size());
    for (const auto& u : uncertain) {
      const std::string_view sfx = suffix(u);
      uint64_t head = 0;
      for (size_t k = 0; k < 8; ++k) head = head << 8 | (k < sfx.size() ? static_cast<uint8_t>(sfx[k]) : 0u);
      keys.push_back({head, static_cast<uint32_t>(sfx.size()), u.first, u.second});
    }
    auto rest = [&](const Key& k) { return vocab.token_bytes(k.id).substr(k.offset + 8); };
    std::sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) {
      if (a.head != b.head) return a.head < b.head;
      if (a.len > 8 && b.len > 8) {
        if (const int c = rest(a).compare(rest(b)); c != 0) return c < 0;
      } else if (a.len != b.len) {
        return a.len < b.len;  // equal first bytes: the shorter is a prefix of the longer
      }
      return a.id < b.id;
    });
    uncertain.clear();
    for (const Key& k : keys) {
      // The same token with the same suffix (an offset found twice) once.
      if (!uncertain.empty() && uncertain.back().first == k.id && uncertain.back().second == k.offset) continue;
      uncertain.emplace_back(k.id, k.offset);
    }
  }
  out->uncertain_tokens = uncertain.size();
  std::vector<int32_t> uncertain_ids;
  for (const auto& u : uncertain) uncertain_ids.push_back(u.first);
  std::sort(uncertain_ids.begin(), uncertain_ids.end());
  uncertain_ids.erase(std::unique(uncertain_ids.begin(), uncertain_ids.end()), uncertain_ids.end());
  out->rejected = vocab.sorted_text_tokens().size() - accepted - uncertain_ids.size();
  out->accepted = TokenSet::from_bits(std::move(part.accepted), accepted, vocab.size());
  std::string_view previous;
  for (size_t i = 0; i < uncertain.size(); ++i) {
    const std::string_view sfx = suffix(uncertain[i]);
    if (out->suffixes.empty() || previous != sfx) {
      uint32_t lcp = 0;
      while (lcp < previous.size() && lcp < sfx.size() && previous[lcp] == sfx[lcp]) ++lcp;
      out->suffixes.emplace_back(sfx);
      out->suffix_common.push_back(out->suffixes.size() == 1 ? 0 : lcp);
      out->suffix_tokens.emplace_back();
      previous = sfx;
    }
    out->suffix_tokens.back().push_back(uncertain[i].first);
  }
  out->compute_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  if (!parts_key.empty()) SharedStateMasks::instance().insert(std::move(parts_key), out);
  return out;
}

}  // namespace lockstep
