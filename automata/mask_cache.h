// automata/mask_cache.h — per-state token classification, computed once and shared.
//
// For each automaton state s of rule R, the vocabulary splits three ways (XGrammar's
// adaptive token mask cache, arXiv:2411.15100, in Earley terms):
//   accepted   — the token's bytes can all be read starting in s, staying inside this
//                instance of R (sub-rules included): allowed whatever surrounds R;
//   uncertain  — R can complete after j bytes (0 < j < len) and byte j may follow R in
//                some context: allowed iff the actual context accepts the rest, the suffix;
//   rejected   — everything else.
// Uncertain tokens are kept grouped by suffix, so the matcher resolves each distinct
// suffix once against its real parse state. Sets are stored in the smallest form: a
// sorted id list, the complement's id list, or a bitset.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "automata/compiled_grammar.h"
#include "automata/completion.h"
#include "automata/earley.h"
#include "automata/mask/configuration_cache.h"
#include "automata/mask/token_set.h"
#include "automata/vocabulary.h"

namespace lockstep {

namespace mask {
struct PartialMask;
struct Segment;
}  // namespace mask

/// The per-state masks of one (grammar, vocabulary) pair, filled lazily on first use or
/// eagerly with precompute(). Thread-safe: any number of matchers on any threads share one
/// cache, and no state is ever computed twice.
class TokenMaskCache {
 public:
  TokenMaskCache(std::shared_ptr<const CompiledGrammar> grammar,
                 std::shared_ptr<const Vocabulary> vocabulary, ParserLimits limits = {});
  ~TokenMaskCache();

  /// The mask of `state` (shared by its mask class), computing it if needed (blocks while
  /// another thread computes it).
  /// Throws ParserLimitError if the state's walk exceeds the parser limits.
  const StateMask& get(uint32_t state);
  /// Computes every mask class's mask now, on `threads` threads (0: hardware concurrency).
  void precompute(unsigned threads = 0);
  /// Starts computing every state's mask on one background thread (the decode loop keeps
  /// using get(), which computes a state itself when it is not ready yet). The destructor
  /// stops and joins the thread. Errors in the background are dropped: get() reports them.
  void start_background_precompute();

  struct Stats {
    size_t states = 0;           ///< mask classes of the grammar (CompiledGrammar::mask_class)
    size_t computed = 0;         ///< classes whose mask is in the cache
    size_t computations = 0;     ///< state walks run (none is run twice)
    size_t shared = 0;           ///< masks taken from the process-wide cache of automaton rules
                                 ///< (computations + shared = computed)
    size_t memory_bytes = 0;     ///< memory of the cached masks (bytes)
    size_t segment_bytes = 0;    ///< memory of this cache's own walk segments (bytes; shared
                                 ///< segments live in a process-wide cache of at most 128 MiB)
    double compute_seconds = 0;  ///< total time spent computing them
    size_t uncertain_tokens = 0; ///< over all computed states
  };
  Stats stats() const;

  const CompiledGrammar& grammar() const { return *grammar_; }
  const Vocabulary& vocabulary() const { return *vocabulary_; }
  std::shared_ptr<const CompiledGrammar> shared_grammar() const { return grammar_; }
  std::shared_ptr<const Vocabulary> shared_vocabulary() const { return vocabulary_; }
  const ParserLimits& limits() const { return limits_; }
  /// Whole masks of configurations, shared by the matchers of this cache.
  ConfigurationCache& configurations() const { return configurations_; }
  /// Shortest completions and token spellings for length-aware closing (completion.h),
  /// built on first use (automata/closing.cpp) and shared by the matchers of this cache.
  const ClosingData& closing() const;

 private:
  std::shared_ptr<const StateMask> compute(uint32_t state);
  std::shared_ptr<const StateMask> compute_shared(uint32_t state);
  void walk_vocabulary(uint32_t state, bool skip_seed_rules, mask::PartialMask& out) const;
  /// Fills `out` (its bitmask made here), or returns the mask of a state whose walk had the
  /// same parts (then `out` is not filled); `parts_key` is set to the key of those parts.
  std::shared_ptr<const StateMask> walk_automaton(uint32_t state, mask::PartialMask& out, std::string& parts_key) const;
  bool compose(uint32_t state, mask::PartialMask& out);
  /// get(), or with !wait null when the state's class is being computed already.
  const StateMask* lookup(uint32_t state, bool wait);

  std::shared_ptr<const CompiledGrammar> grammar_;
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
  std::vector<std::shared_ptr<const StateMask>> owned_;  // guarded by mutex_
  std::thread background_;
  std::atomic<bool> stop_{false};
  // First-byte segments of automaton walks, by (state after the byte, byte); bounded.
  static constexpr size_t kMaxSegmentEntries = size_t{16} << 20;
  mutable std::mutex segments_mutex_;
  mutable std::unordered_map<uint64_t, std::shared_ptr<const mask::Segment>> segments_;
  mutable size_t segment_entries_ = 0;
  // Canonical signatures of automaton-rule states (see signature()), by global state.
  const std::string& signature(uint32_t state) const;
  // Canonical signature of what a walk from a grammar rule's state can reach (see the .cpp),
  // or empty.
  std::string network_signature(uint32_t state) const;
  std::string network_bfs(uint32_t state) const;
  const std::pair<uint64_t, uint64_t>* rule_hash(uint32_t rule) const;
  std::pair<uint64_t, uint64_t> hash_within_rule(uint32_t start, uint32_t tag) const;
  mutable std::vector<std::pair<uint64_t, uint64_t>> rule_hash_;  // by rule, under canonical_mutex_
  mutable std::vector<uint8_t> rule_hash_state_;
  // Appends what a state's classification depends on besides its automaton: FOLLOW of
  // `rule` and the vocabulary.
  void append_context(std::string& key, uint32_t rule) const;
  // Both signatures' memo and scratch (CanonicalNumbering in the .cpp), under one mutex.
  mutable std::mutex canonical_mutex_;
  mutable std::unordered_map<uint32_t, std::string> signatures_;
  mutable std::vector<uint64_t> canonical_index_;  // per state: stamp << 32 | index
  mutable std::vector<uint32_t> canonical_order_;
  mutable uint64_t canonical_stamps_ = 0;
  // Byte classes of an automaton-only rule: bytes no edge of the rule tells apart. With
  // calls_walkable, every rule it calls reads bytes only and is not nullable (call_walk.h).
  struct ByteClasses {
    std::array<uint8_t, 256> of{};
    uint32_t count = 0;
    bool calls_walkable = true;
  };
  const ByteClasses& byte_classes(uint32_t rule) const;
  mutable std::mutex byte_classes_mutex_;
  mutable std::unordered_map<uint32_t, std::unique_ptr<const ByteClasses>> byte_classes_;
  // Bits of every text token (not control, not empty), built once.
  std::vector<uint32_t> all_text_bits() const;
  mutable std::once_flag all_text_once_;
  mutable std::vector<uint32_t> all_text_;
};

}  // namespace lockstep
