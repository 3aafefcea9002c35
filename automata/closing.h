// automata/closing.h — length-aware closing for one sequence (internal to EarleyMatcher;
// docs/closing.md): the shortest completion of the parser's current configuration, and
// the filter that keeps a token budget completable.
//
// The shortest completion of an Earley configuration: an item (s, o) of the current set
// completes with bytes(s) (ShortestCompletions) and then whatever waits on rule(s) started
// at o. What waits costs, per set o and rule R,
//   C(R, o) = min( 0 if R is the root and o = 0,
//                  bytes(t) + C(rule(s'), o') over items (s', o') of set o with an edge s' -R→ t )
// (a shortest path over the sets' waiting items; items of set o that were predicted at o
// link rules of the same set, solved with Dijkstra's algorithm per set). Tables are built
// per set on demand and kept until a rollback drops the set. The tokens of a completion are
// the fewest vocabulary tokens that spell its bytes (TokenSpeller).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "automata/completion.h"
#include "automata/earley.h"

namespace lockstep {

class CompletionTracker {
 public:
  CompletionTracker(const GrammarAutomaton& grammar, const ClosingData& data);

  /// A kernel item of the parser's current set with the shortest completion.
  struct Best {
    uint64_t bytes = kNoCompletion;
    uint32_t state = 0;
    uint32_t origin = 0;
  };
  Best best(const EarleyParser& p);
  /// The bytes of `b`'s completion; false (and `out` empty) when longer than
  /// ShortestCompletions::max_materialized_bytes().
  bool text(const EarleyParser& p, const Best& b, std::string& out);
  /// Tokens that spell `b`'s completion (kNoCompletion when the vocabulary cannot); its
  /// bytes go to `text` (empty when too long to build).
  uint64_t tokens(const EarleyParser& p, const Best& b, std::string& text);

  /// Forgets the tables of sets at index >= `sets` (call after the parser rolled back to
  /// sets - 1 bytes).
  void truncate(size_t sets) {
    if (tables_.size() > sets) tables_.resize(sets);
  }

  /// The budget filter. For every text token set in `mask` (uint32_t[bitmask_words]),
  /// walks the parser over the token's bytes (sorted vocabulary, shared prefixes read once)
  /// and computes the tokens its completion would then need: the shortest completion's
  /// spelling, or the rest of `plan` (a completion of the current configuration) when the
  /// token's bytes start it and that is fewer. Clears the token's bit when that exceeds
  /// `limit`. Returns the largest such count over the mask's text tokens before the plan is
  /// considered (kNoCompletion when unknown). With `needs`, appends (count after the plan,
  /// token) for every token of the mask whose count is 1 or more, whatever `limit`: what a
  /// later call with another limit would clear. The parser is left as it was.
  uint64_t restrict(EarleyParser& p, const Vocabulary& vocab, std::span<uint32_t> mask, uint64_t limit,
                    const std::string& plan,
                    std::vector<std::pair<uint64_t, int32_t>>* needs = nullptr);

 private:
  struct Entry {
    uint32_t rule;
    uint64_t cost;
    uint32_t via_target;  // kAccept: the root completing at 0
    uint32_t via_rule;
    uint32_t via_origin;
  };
  static constexpr uint32_t kAccept = UINT32_MAX;
  struct Table {
    bool built = false;
    std::vector<Entry> entries;  // sorted by rule
  };
  const Entry* entry(uint32_t set, uint32_t rule) const;
  uint64_t cost(const EarleyParser& p, uint32_t set, uint32_t rule);
  void ensure(const EarleyParser& p, uint32_t set);
  void build(const EarleyParser& p, uint32_t set);
  uint64_t tokens_of_text(const std::string& text, uint64_t bytes) const;

  const GrammarAutomaton& g_;
  const ClosingData& data_;
  std::vector<Table> tables_;
  // Scratch of build(): a slot per rule (stamp, index into entries).
  std::vector<std::pair<uint32_t, uint32_t>> slot_;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> origins_;
  std::string scratch_;
};

}  // namespace lockstep
