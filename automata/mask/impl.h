// automata/mask/impl.h — TokenMaskCache::Impl, the private state of the mask cache and the
// declarations of its machinery, each defined in the file of its concern (named below).
// Internal to automata/mask/.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "automata/mask/byte_classes.h"
#include "automata/mask/shared_caches.h"
#include "automata/mask_cache.h"
#include "automata/token_bitmask.h"

namespace lockstep {

namespace mask {

// Within a sorted run [i, end) of byte strings that share their first c bytes, where i
// failed at byte c (byte_at(k): string k's byte at c, nondecreasing over the run): the first
// k after i whose byte at c is in `next` and above i's, found by galloping, or `end`. A state
// reading a few bytes (whitespace, a quote, a key's letter) skips the ~200 children of a
// common prefix such as a space in a few steps instead of one step each.
template <typename ByteAt>
size_t next_readable(size_t i, size_t end, const GrammarAutomaton::ByteSet& next, ByteAt&& byte_at) {
  unsigned after = byte_at(i);
  size_t lo = i + 1;
  while (lo < end) {
    const unsigned want = GrammarAutomaton::next_byte(next, after + 1);
    if (want == 256) return end;
    // The first k in [lo, end) with byte_at(k) >= want.
    size_t step = 1, hi = lo;
    while (hi < end && byte_at(hi) < want) {
      lo = hi + 1;
      hi = lo + step;
      step *= 2;
    }
    hi = std::min(hi, end);
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (byte_at(mid) < want) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == end) return end;
    after = byte_at(lo);
    if ((next[after >> 6] >> (after & 63)) & 1) return lo;
  }
  return end;
}

// A state's classification while it is being assembled from parts.
struct PartialMask {
  std::vector<uint32_t> accepted;                          // bitmask words
  // (token, offset): the token is allowed iff the context accepts its bytes from offset on.
  std::vector<std::pair<int32_t, uint32_t>> uncertain;
  // The accepted tokens as listed by walk_vocabulary, while there are at most `ids_max`
  // (one more means more): a narrow state's set without a scan of the whole bitmask.
  std::vector<int32_t> accepted_ids;
  size_t ids_max = 0;
  // Sets token `id` in `accepted` and lists it (while the list is kept).
  void accept(int32_t id) {
    set_bit(accepted, static_cast<size_t>(id));
    if (accepted_ids.size() <= ids_max) accepted_ids.push_back(id);
  }
  // Adds `set` to `accepted`, and to the list while it is kept (a set in list form that fits;
  // any other ends the list: one more than ids_max means more).
  void accept_all(const TokenSet& set) {
    set.or_into(accepted);
    if (accepted_ids.size() > ids_max) return;
    if (set.form() == TokenSet::Form::kIds && accepted_ids.size() + set.size() <= ids_max) {
      accepted_ids.insert(accepted_ids.end(), set.ids().begin(), set.ids().end());
    } else {
      accepted_ids.resize(ids_max + 1);
    }
  }
};

}  // namespace mask

// Thread-safety: as TokenMaskCache (shared by any number of threads); each member says
// which mutex guards it, the masks themselves are published through atomics.
struct TokenMaskCache::Impl {
  // Vocabularies up to this size walk a grammar state directly: the walk costs less than
  // the network signature that would share its mask between grammars.
  static constexpr size_t kSmallVocabulary = 4096;
  // Grammar states whose tokens start with at most this many bytes are walked directly, not
  // looked up by their network signature (compute_shared).
  static constexpr unsigned kNarrowFirstBytes = 2;
  // An automaton-only rule's narrow state is walked directly, not by the table walk, when
  // its walk can read at most this many tokens past their first byte: about what the table
  // walk's fixed costs (byte classes, tables, segment signatures) would read.
  static constexpr size_t kDirectWalkTokens = 1024;
  Impl(std::shared_ptr<const GrammarAutomaton> grammar, std::shared_ptr<const Vocabulary> vocabulary,
       ParserLimits limits);
  /// Stops and joins the background thread.
  ~Impl();

  // ---- token_mask_cache.cpp: the cache itself
  const StateMask& get(uint32_t state);
  /// get(), or with !wait null when the state's class is being computed already.
  const StateMask* lookup(uint32_t state, bool wait);
  void precompute(unsigned threads);
  void start_background_precompute();
  Stats stats() const;
  const ClosingData& closing() const;
  std::shared_ptr<const StateMask> compute(uint32_t state, bool direct = false);
  std::shared_ptr<const StateMask> compute_shared(uint32_t state);
  /// The text tokens whose first two bytes `state` (an automaton-only rule's state) can read
  /// (whose first byte it can, when the byte may end the rule); SIZE_MAX when it calls a rule.
  size_t second_byte_tokens(uint32_t state) const;
  bool compose(uint32_t state, mask::PartialMask& out);
  std::string automaton_mask_key(uint32_t state);
  bool mask_at_hand(uint32_t state);

  // ---- trie_walk.cpp
  void walk_vocabulary(uint32_t state, bool skip_seed_rules, mask::PartialMask& out) const;
  // The bytes a token read from `state` can start with (its byte edges, and the first bytes
  // of the rules it enters unless skip_seed_rules) into `first`; false when a rule it enters
  // is nullable (bytes after it could come first: no exact set).
  bool first_bytes(uint32_t state, bool skip_seed_rules, GrammarAutomaton::ByteSet& first) const;

  // ---- automaton_walk.cpp
  /// Fills `out` (its bitmask made here), or returns the mask of a state whose walk had the
  /// same parts (then `out` is not filled); `parts_key` is set to the key of those parts.
  std::shared_ptr<const StateMask> walk_automaton(uint32_t state, mask::PartialMask& out, std::string& parts_key) const;

  // ---- signatures.cpp
  // Canonical signatures of automaton-rule states (see signature()), by global state.
  const std::string& signature(uint32_t state) const;
  // signature() cut at `cut_bytes` (mask::kShortTokenBytes or mask::kMidTokenBytes; see the
  // .cpp), or empty; it starts with 'C' when nothing was cut, else 'T'.
  const std::string& short_signature(uint32_t state, uint32_t cut_bytes) const;
  // What a walk of a short token's bytes after `state` reads, hashed bottom-up (see the .cpp):
  // "B" and the hash, or empty. Covers the tokens the cut signature covers when it cuts, but
  // a loop and a chain unrolling it far from its end have the same one.
  const std::string& bounded_signature(uint32_t state) const;
  bool numbered_signature(uint32_t state, uint32_t frontier, uint64_t tag, std::string& sig,
                          size_t max_states = SIZE_MAX) const;
  // Before numbered_signature() starts over: hashes every callee not hashed yet that its walk
  // from `state` meets; false when the walk passes kMaxSignatureStates states or a callee has
  // no hash (then there is no signature).
  bool hash_callees_within(uint32_t state, uint32_t frontier, size_t max_states) const;
  enum class Acyclic : uint8_t { kHashed, kNumbered, kNotYet };
  Acyclic acyclic_hash(uint32_t state, std::pair<uint64_t, uint64_t>& out) const;
  struct ShapeSet {
    std::vector<uint64_t> shapes;  // sorted, distinct
    uint64_t hash = 0;
  };
  const ShapeSet& short_shapes(uint32_t state) const;
  uint64_t local_shape(uint32_t state) const;
  uint64_t local_shape_of(uint32_t state) const;
  bool is_loop(uint32_t state) const;
  // Appends what a state's classification depends on besides its automaton: FOLLOW of
  // `rule` and the vocabulary.
  void append_context(std::string& key, uint32_t rule) const;

  // ---- network_signatures.cpp
  // Canonical signature of what a walk from a grammar rule's state can reach (see the .cpp),
  // or empty.
  std::string network_signature(uint32_t state) const;
  std::string network_bfs(uint32_t state) const;
  bool network_digest(uint32_t state, std::pair<uint64_t, uint64_t>& out) const;
  const std::pair<uint64_t, uint64_t>* rule_hash(uint32_t rule) const;
  const std::pair<uint64_t, uint64_t>* rule_hash_within(uint32_t rule, size_t& budget, bool& over) const;
  const std::pair<uint64_t, uint64_t>* recursive_rule_hash(uint32_t rule) const;
  std::pair<uint64_t, uint64_t> hash_within_rule(uint32_t start, uint32_t tag) const;
  // A 128-bit digest of rule_automaton_key(rule) (itself a few words: the automaton's digest
  // and flags): what stands for the automaton in the key of a state without a signature.
  std::pair<uint64_t, uint64_t> automaton_digest(uint32_t rule) const;

  // ---- continued_walk.cpp
  // States at most this many bytes before a final state of their rule may be continued.
  static constexpr size_t kContinueDepth = 16;
  bool continuable(uint32_t state) const;
  const StateMask& continued(uint32_t state, uint32_t next_rule);
  std::shared_ptr<const StateMask> walk_continued(uint32_t state, uint32_t next_rule) const;

  // ---- byte_classes.cpp
  const mask::ByteClasses& byte_classes(uint32_t rule) const;

  // ---- state
  std::shared_ptr<const GrammarAutomaton> grammar_;
  std::shared_ptr<const Vocabulary> vocabulary_;
  ParserLimits limits_;
  mutable ConfigurationCache configurations_;
  mutable std::once_flag closing_once_;
  mutable std::unique_ptr<ClosingData> closing_;
  std::vector<std::atomic<const StateMask*>> masks_;
  mutable std::mutex mutex_;
  std::condition_variable done_;
  std::vector<uint8_t> computing_;
  std::atomic<size_t> computations_{0};
  std::atomic<size_t> shared_hits_{0};
  std::atomic<size_t> direct_walks_{0};
  mutable std::atomic<size_t> mid_segments_{0};  // Stats::mid_segments
  mutable std::atomic<size_t> run_tokens_{0};    // Stats::run_tokens
  mutable std::atomic<size_t> trie_run_tokens_{0};  // Stats::trie_run_tokens
  std::vector<std::shared_ptr<const StateMask>> owned_;  // guarded by mutex_
  std::thread background_;
  std::atomic<bool> stop_{false};
  // First-byte segments of automaton walks, by (state after the byte, byte); bounded.
  static constexpr size_t kMaxSegmentEntries = size_t{16} << 20;
  mutable std::mutex segments_mutex_;
  mutable std::unordered_map<uint64_t, std::shared_ptr<const mask::Segment>> segments_;
  mutable size_t segment_entries_ = 0;
  mutable std::vector<std::pair<uint64_t, uint64_t>> rule_hash_;  // by rule, under canonical_mutex_
  mutable std::vector<uint8_t> rule_hash_state_;
  // By rule: whether network_bfs() gave up on one of its states, so on its start too (under
  // canonical_mutex_).
  mutable std::vector<uint8_t> network_overflows_;
  // acyclic_hash()'s memo, by rule (made on its first use) and state within the rule, under
  // canonical_mutex_.
  struct AcyclicMemo {
    std::vector<std::pair<uint64_t, uint64_t>> hash;
    std::vector<uint8_t> state;
  };
  mutable std::unordered_map<uint32_t, AcyclicMemo> acyclic_;
  // Both signatures' memo and scratch (mask::CanonicalNumbering), under one mutex.
  mutable std::mutex canonical_mutex_;
  mutable std::unordered_map<uint32_t, std::string> signatures_;
  mutable std::unordered_map<uint64_t, std::string> short_signatures_;  // by cut_bytes << 32 | state
  mutable std::unordered_map<uint32_t, std::string> bounded_signatures_;
  mutable std::unordered_map<uint32_t, ShapeSet> short_shapes_;
  mutable std::unordered_map<uint32_t, bool> is_loop_;  // is_loop()
  mutable std::unordered_map<uint64_t, std::pair<uint64_t, uint64_t>> bounded_memo_;  // (state, depth) → hash
  mutable std::vector<uint64_t> canonical_index_;  // per state: stamp << 32 | index
  mutable std::vector<uint32_t> canonical_order_;
  mutable uint64_t canonical_stamps_ = 0;
  // hash_callees_within()'s states seen, per state the stamp of the call that saw it (its
  // own scratch: the rule_hash() calls it makes use the numbering's).
  mutable std::vector<uint32_t> callee_scan_seen_;
  mutable uint32_t callee_scan_stamp_ = 0;
  mutable std::mutex byte_classes_mutex_;
  mutable std::unordered_map<uint32_t, std::unique_ptr<const mask::ByteClasses>> byte_classes_;
  // continued()'s masks by (mask class, next rule), continuable()'s answers by state.
  mutable std::mutex continued_mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<const StateMask>> continued_;
  mutable std::unordered_map<uint32_t, bool> continuable_;
};

}  // namespace lockstep
