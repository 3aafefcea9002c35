// automata/completion.h — shortest completions of a grammar's automaton states, and the
// fewest vocabulary tokens that spell a byte string: the static data of length-aware
// closing (docs/closing.md), computed once per grammar and vocabulary.
//
// For every automaton state s, bytes(s) is the length of the shortest byte string that
// takes s to a final state of its rule, where a rule edge R costs R's own shortest string
// (the callee's start state). These are the least fixed point of
//   bytes(s) = 0 if s is final, else min( 1 + bytes(t) over byte edges s → t,
//                                         bytes(start(R)) + bytes(t) over rule edges s -R→ t )
// computed with Knuth's generalization of Dijkstra's algorithm to superior functions
// (Knuth 1977, "A generalization of Dijkstra's algorithm", Inf. Proc. Letters 6(1)) in
// O(E log V). The chosen edges give the strings themselves.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "automata/grammar_automaton.h"
#include "automata/vocabulary.h"
#include "grammar/hash.h"

namespace lockstep {

inline constexpr uint64_t kNoCompletion = UINT64_MAX;

/// Immutable once built: any number of threads may read it.
class ShortestCompletions {
 public:
  /// O(states + edges) memory, O(E log V) time. The grammar must outlive this object.
  explicit ShortestCompletions(const GrammarAutomaton& grammar);

  /// Bytes of the shortest string from `state` to a final state of its rule
  /// (kNoCompletion when there is none).
  uint64_t bytes(uint32_t state) const { return dist_[state]; }
  /// Writes that string to `out` (empty for a final state). Strings longer than
  /// max_materialized_bytes() are not built: then `out` is empty and false is returned.
  bool text(uint32_t state, std::string& out) const;
  static constexpr uint64_t max_materialized_bytes() { return uint64_t{1} << 16; }

  /// An upper bound on the shortest completion (bytes) of every parse configuration of
  /// the grammar: finite when no rule reachable from the root calls itself, directly or
  /// not; kNoCompletion otherwise.
  uint64_t max_configuration_bytes() const { return max_configuration_bytes_; }

 private:
  struct Choice {
    uint32_t target = 0;
    uint32_t label = 0;  // the byte, or the rule
    uint8_t kind = 0;    // 0: final (or none), 1: byte edge, 2: rule edge
  };
  const GrammarAutomaton& g_;
  std::vector<uint64_t> dist_;
  std::vector<Choice> choice_;
  uint64_t max_configuration_bytes_ = kNoCompletion;
};

/// The fewest vocabulary tokens whose bytes concatenate to a byte string (text tokens
/// only: control and empty tokens spell nothing). Reads the vocabulary's sorted tokens as a
/// trie, so it costs nothing to build. The vocabulary must outlive it.
class TokenSpeller {
 public:
  explicit TokenSpeller(const Vocabulary& vocabulary);
  static constexpr uint32_t kCannot = UINT32_MAX;
  /// Dynamic programming over the string's positions; from each, the tokens that start
  /// the rest are the runs of the sorted vocabulary narrowed byte by byte (a binary search
  /// per byte). Tokens longer than 64 bytes are not used (an upper bound still). kCannot
  /// when some byte cannot be spelled.
  uint32_t min_tokens(std::string_view bytes) const;
  /// True when every byte value is a one-byte text token (then a string of n bytes takes at
  /// most n tokens).
  bool spells_every_byte() const { return every_byte_; }

 private:
  const Vocabulary& v_;
  bool every_byte_ = false;
};

/// What length-aware closing shares among the matchers of one grammar and vocabulary.
struct ClosingData {
  ClosingData(const GrammarAutomaton& grammar, const Vocabulary& vocabulary)
      : completions(grammar), speller(vocabulary) {}
  ShortestCompletions completions;
  TokenSpeller speller;

  /// What the budget filter found for one whole-mask configuration, for any budget.
  struct Restriction {
    /// The largest tokens-to-accept over the tokens the mask allows (before the plan): a
    /// budget at least this large does not bind.
    uint64_t largest = 0;
    /// (tokens-to-accept after the plan, token) for the mask's tokens that need one or more,
    /// most first: a budget of `limit` clears those above it. Empty when there were more than
    /// kMaxRecordedTokens (only `largest` is kept; the filter walks again).
    std::vector<std::pair<uint64_t, int32_t>> needs;
    bool recorded = false;
    std::string plan;  ///< the configuration's completion, for the next step's plan
  };
  static constexpr size_t kMaxRecordedTokens = 4096;
  /// Per whole-mask configuration (the matcher's configuration key): its Restriction, so a
  /// configuration met again needs no walk, whatever the budget left. Thread-safe; bounded
  /// (starts over when full).
  std::shared_ptr<const Restriction> find_restriction(const std::vector<uint32_t>& key, uint64_t generation) const;
  void insert_restriction(const std::vector<uint32_t>& key, uint64_t generation,
                          std::shared_ptr<const Restriction> value) const;

 private:
  using KeyHash = U32SeqHash</*SeedWithLength=*/false, /*Fold=*/true>;
  static constexpr size_t kMaxEntries = 1u << 18;
  mutable std::mutex mutex_;
  mutable uint64_t generation_ = 0;
  mutable std::unordered_map<std::vector<uint32_t>, std::shared_ptr<const Restriction>, KeyHash> restrictions_;
};

}  // namespace lockstep
