// automata/earley.h — an Earley parser over the per-rule byte automata.
//
// Earley's algorithm (Earley 1970) on a recursive transition network: an item is
// (automaton state, origin position); scanning reads one byte, prediction starts a rule
// at the current position, completion advances the items that waited on a finished rule.
// Nullable rules use the Aycock–Horspool fix (Aycock & Horspool 2002, "Practical Earley
// Parsing"), so any context-free grammar — ambiguous or left-recursive — is handled.
//
// One item set per consumed byte is kept, so rolling back n bytes is popping n sets.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "automata/grammar_automaton.h"
#include "grammar/limits.h"

namespace lockstep {

/// The parser hit one of its explicit limits (see ParserLimits).
class ParserLimitError : public LimitError {
 public:
  using LimitError::LimitError;
};

/// Defaults from EngineLimits (grammar/limits.h), read when the struct is made.
struct ParserLimits {
  /// Items one Earley set may hold; more means the grammar is too ambiguous to follow.
  uint32_t max_items_per_set = clamp32(engine_limits().earley_items_per_set);
  /// Items all sets together may hold (8 bytes each): bounds memory however long or deeply
  /// nested the output gets (the Earley counterpart of a stack-depth limit).
  uint32_t max_total_items = clamp32(engine_limits().earley_items_total);

 private:
  static uint32_t clamp32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(v); }
};

class EarleyParser {
 public:
  struct Item {
    uint32_t state;
    uint32_t origin;
  };

  explicit EarleyParser(const GrammarAutomaton& grammar, ParserLimits limits = {});
  /// Starts in boundary mode from `boundary_state` (reset_to_state), without first
  /// predicting the root's whole first set.
  EarleyParser(const GrammarAutomaton& grammar, ParserLimits limits, uint32_t boundary_state);

  /// Origin of the seed item in boundary mode (reset_to_state).
  static constexpr uint32_t kBoundary = UINT32_MAX;

  /// Back to the start (no bytes consumed).
  void reset();
  /// Boundary mode: start from one item in `state` whose rule instance has no parent; when
  /// it completes, the set is marked (boundary_at) instead of completing into a parent.
  /// Used to classify tokens for one automaton state independently of the context.
  void reset_to_state(uint32_t state);
  /// True when, after `depth` bytes, the seed's rule instance can complete (boundary mode).
  bool boundary_at(size_t depth) const { return set_boundary_[depth] != 0; }
  /// Consumes one byte. Returns false, leaving the parser unchanged, when the byte cannot
  /// continue any parse. Throws ParserLimitError (parser unchanged) past a limit.
  bool advance(uint8_t byte);
  /// Consumes all of `bytes` or, on failure, none of them.
  bool advance(std::string_view bytes);
  /// Undoes the last `n` consumed bytes (n <= num_bytes()).
  void rollback(size_t n);
  size_t num_bytes() const { return set_begin_.size() - 2; }
  /// True when the bytes consumed so far form a complete sentence of the root rule.
  bool accepting() const { return set_accepting_.back() != 0; }
  /// True when some byte can still be consumed.
  bool can_advance() const;

  /// Completion probes for the mask engine: as if `rule`, started at byte position
  /// `origin`, completed right after the bytes consumed so far, which of `suffixes` (sorted,
  /// `common[i]` = common prefix with suffix i-1) could follow? Sets accepted[i]. The parser
  /// is left unchanged.
  void probe_after_completion(uint32_t rule, uint32_t origin,
                              std::span<const std::string> suffixes,
                              std::span<const uint32_t> common, std::vector<char>& accepted);

  /// The items of set `k` (0 <= k <= num_bytes()).
  std::span<const Item> items_at(size_t k) const {
    return {items_.data() + set_begin_[k], set_begin_[k + 1] - set_begin_[k]};
  }
  /// The items of the current (last) set.
  std::span<const Item> current_items() const {
    return {items_.data() + set_begin_[set_begin_.size() - 2],
            set_begin_.back() - set_begin_[set_begin_.size() - 2]};
  }
  const GrammarAutomaton& grammar() const { return *grammar_; }

 private:
  void add(uint32_t state, uint32_t origin);
  void close_set();  // prediction + completion over the newest set
  void begin_set();
  void abandon_set();
  // Completion of `rule` into closed set k: every item there with an edge to `rule`,
  // advanced over it, is added to the set under construction.
  void complete_into(uint32_t k, uint32_t rule);

  const GrammarAutomaton* grammar_;
  ParserLimits limits_;
  std::vector<Item> items_;
  // Set k holds items_[set_begin_[k] .. set_begin_[k+1]); the last set is open-ended
  // while it is built and closed by pushing its end.
  std::vector<uint32_t> set_begin_;
  std::vector<uint8_t> set_accepting_;
  std::vector<uint8_t> set_boundary_;
  // For a closed set of kIndexFrom items or more, built at its first completion: its
  // items' rule edges as (rule, target, the item's origin), sorted by rule, so that a
  // completion costs the items waiting on that rule rather than a scan of the set (a root
  // of thousands of alternatives). Null where not built; dropped with their sets.
  struct Waiting {
    uint32_t rule, target, origin;
  };
  static constexpr uint32_t kIndexFrom = 256;
  std::vector<std::shared_ptr<const std::vector<Waiting>>> waiting_;
  // Open-addressing dedupe table for the set under construction.
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> stamps_;
  uint32_t stamp_ = 0;
};

}  // namespace lockstep
