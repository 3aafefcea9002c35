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
//
// The machinery (walks, signatures, byte classes, the process-wide caches) lives in
// automata/mask/, behind TokenMaskCache::Impl (automata/mask/impl.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "automata/grammar_automaton.h"
#include "automata/completion.h"
#include "automata/earley.h"
#include "automata/mask/configuration_cache.h"
#include "automata/mask/token_set.h"
#include "automata/vocabulary.h"

namespace lockstep {

/// The per-state masks of one (grammar, vocabulary) pair, filled lazily on first use or
/// eagerly with precompute(). Thread-safe: any number of matchers on any threads share one
/// cache, and no state is ever computed twice.
class TokenMaskCache {
 public:
  TokenMaskCache(std::shared_ptr<const GrammarAutomaton> grammar,
                 std::shared_ptr<const Vocabulary> vocabulary, ParserLimits limits = {});
  ~TokenMaskCache();

  /// The mask of `state` (shared by its mask class), computing it if needed (blocks while
  /// another thread computes it).
  /// Throws ParserLimitError if the state's walk exceeds the parser limits.
  const StateMask& get(uint32_t state);
  /// A byte set at least this large is broad: a sub-rule whose FIRST set is broad (a string
  /// body) is composed rather than walked through, and a rule whose FOLLOW set is broad has
  /// most tokens that cross its end uncertain (continued masks).
  static constexpr unsigned kBroadBytes = 64;
  /// Whether `state` may take a continued mask: a state of an automaton-only rule R (no
  /// rule edges of its own, not final) at most 16 bytes before a final state of R, whose
  /// FOLLOW set is broad (64 bytes or more): a length block's last positions.
  bool continuable(uint32_t state);
  /// The mask of a continuable `state` in contexts where R's caller calls the automaton-only
  /// rule `next_rule` (N) right after R: tokens that complete R where the next byte forces it
  /// and whose rest N reads from its start are accepted; only tokens N cannot read keep
  /// their suffixes (uncertain, as in get()'s masks). Exact in those contexts: N is one way
  /// the context goes on, and the suffix probe covers every other. Computed once per (mask
  /// class, N), one table walk of the vocabulary (docs/masks.md, "Continued masks").
  const StateMask& continued(uint32_t state, uint32_t next_rule);
  /// Computes every mask class's mask now, on `threads` threads (0: hardware concurrency).
  void precompute(unsigned threads = 0);
  /// Starts computing every state's mask on one background thread (the decode loop keeps
  /// using get(), which computes a state itself when it is not ready yet). The destructor
  /// stops and joins the thread. Errors in the background are dropped: get() reports them.
  void start_background_precompute();

  struct Stats {
    size_t states = 0;           ///< mask classes of the grammar (GrammarAutomaton::mask_class)
    size_t computed = 0;         ///< classes whose mask is in the cache
    size_t computations = 0;     ///< state walks run (none is run twice)
    size_t direct = 0;           ///< of those, narrow states of automaton-only rules walked by the
                                 ///< trie walk instead of the table walk (compute_shared)
    size_t mid_segments = 0;     ///< first-byte walk segments whose tokens of at most 8 bytes
                                 ///< were found under the successor's signature cut there,
                                 ///< leaving the longer tokens to walk (docs/masks.md)
    size_t run_tokens = 0;       ///< tokens the table walk read whole along a uniform run of a
                                 ///< class (a counted repeat's positions) from their byte kinds,
                                 ///< without a step per byte (docs/masks.md)
    size_t trie_run_tokens = 0;  ///< the same in the trie walk of grammar states (a counted
                                 ///< repeat inside a rule that calls others, such as an
                                 ///< object's property value)
    size_t shared = 0;           ///< masks taken from the process-wide cache of automaton rules
                                 ///< (computations + shared = computed)
    size_t memory_bytes = 0;     ///< memory of the cached masks (bytes)
    size_t segment_bytes = 0;    ///< memory of this cache's own walk segments (bytes; shared
                                 ///< segments live in a process-wide cache of at most 128 MiB)
    double compute_seconds = 0;  ///< total time spent computing them
    size_t uncertain_tokens = 0; ///< over all computed states
    size_t continued = 0;        ///< continued masks computed (continued()), by (class, next rule)
  };
  Stats stats() const;

  const GrammarAutomaton& grammar() const;
  const Vocabulary& vocabulary() const;
  std::shared_ptr<const GrammarAutomaton> shared_grammar() const;
  std::shared_ptr<const Vocabulary> shared_vocabulary() const;
  const ParserLimits& limits() const;
  /// Whole masks of configurations, shared by the matchers of this cache.
  ConfigurationCache& configurations() const;
  /// Shortest completions and token spellings for length-aware closing (completion.h),
  /// built on first use and shared by the matchers of this cache.
  const ClosingData& closing() const;

  /// The private state and machinery, defined in automata/mask/impl.h (internal to the mask
  /// engine).
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep
