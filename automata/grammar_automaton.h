// automata/grammar_automaton.h — a grammar compiled into one byte-level automaton per rule.
//
// Every rule body becomes a deterministic automaton whose edges read either a byte range
// or a whole sub-rule (a recursive transition network). States are numbered globally
// across rules, so a parser item is just (state, origin). The compiled form is immutable
// and may be shared by any number of matchers on any threads.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/limits.h"

namespace lockstep {

/// Limits that keep compilation bounded in time and memory. Exceeding one throws
/// LimitError naming the limit and the rule's line:column.
/// Defaults from EngineLimits (grammar/limits.h), read when the struct is made.
struct CompileLimits {
  /// Automaton states (NFA or DFA) one rule may expand into, e.g. through `x{0,100000}`.
  uint32_t max_states_per_rule = static_cast<uint32_t>(std::min<uint64_t>(engine_limits().rule_automaton_states, UINT32_MAX));
  /// Automaton states of the whole grammar.
  uint32_t max_total_states = static_cast<uint32_t>(std::min<uint64_t>(engine_limits().grammar_automaton_states, UINT32_MAX));
  /// Rules with at most this many DFA states are minimized (O(m log n) partition
  /// refinement, grammar/partition_refinement.h).
  uint32_t max_states_to_minimize = 1u << 20;
  /// Substitute non-recursive rules into their callers first (automata/inline.h).
  bool inline_rules = true;
  /// How JSON strings read their \u escapes up to U+FFFF (automata/json_escapes.h): through
  /// escape rules (true), spelled out in their automata (false), or as escapes_by_rule's
  /// cost model picks for the grammar (unset). The masks of a string's states depend on it,
  /// so the warm start (runtime/json_warm_start.h) prepares strings both ways.
  std::optional<bool> escape_rules;
};

/// Builds the byte-DFA templates (direct_automaton_dfa's partial states, kept
/// process-wide) of the JSON-string states every object's keys meet: for each printable
/// ASCII code point c, c alone, and c beside every other code point (a name trie's
/// complement), for both ways of reading \u escapes (escapes_by_rule), with the automata
/// of the escape rules they call. About 6–7 ms and 1.7 MB resident; done once per process
/// with the generic JSON building blocks (runtime/json_warm_start.h). Thread-safe.
void prepare_key_templates();

class GrammarAutomaton {
 public:
  struct ByteEdge {
    uint8_t lo, hi;
    uint32_t target;
  };
  struct RuleEdge {
    uint32_t rule;
    uint32_t target;
  };

  /// Compiles `grammar` (validated first; its warnings stay in grammar().warnings). Throws
  /// GrammarError for a malformed grammar, LimitError past a limit (compile_ms included).
  static std::shared_ptr<const GrammarAutomaton> compile(const Grammar& grammar,
                                                        const CompileLimits& limits = {});
  /// The same, keeping `grammar` (grammar() returns it) without a copy.
  static std::shared_ptr<const GrammarAutomaton> compile(Grammar&& grammar, const CompileLimits& limits = {});

  uint32_t num_states() const { return static_cast<uint32_t>(state_rule_.size()); }
  uint32_t num_rules() const { return static_cast<uint32_t>(rule_start_.size()); }
  uint32_t root_rule() const { return root_; }
  uint32_t rule_start(uint32_t rule) const { return rule_start_[rule]; }
  /// One past the rule's last state (a rule's states are numbered contiguously).
  uint32_t rule_end(uint32_t rule) const { return rule + 1 < num_rules() ? rule_start_[rule + 1] : num_states(); }
  bool rule_nullable(uint32_t rule) const { return rule_nullable_[rule] != 0; }
  const std::string& rule_name(uint32_t rule) const {
    return rule < grammar_.rules.size() ? grammar_.rules[rule].name : escape_rule_names_[rule - grammar_.rules.size()];
  }

  /// Strongly connected component of the rule in the call graph (rule edges): two rules
  /// share one exactly when each can call the other, directly or not.
  uint32_t rule_component(uint32_t rule) const { return rule_component_[rule]; }

  /// For a rule that is one embedded automaton (Expr::Kind::kAutomaton, e.g. a JSON Schema
  /// string language): a key identifying its automaton across grammars (equal keys, equal
  /// rule automata, states numbered alike). Empty for other rules.
  const std::vector<uint32_t>& rule_automaton_key(uint32_t rule) const { return rule_automaton_key_[rule]; }

  uint32_t rule_of(uint32_t state) const { return state_rule_[state]; }
  bool is_final(uint32_t state) const { return state_final_[state] != 0; }
  std::span<const ByteEdge> byte_edges(uint32_t state) const {
    return {byte_edges_.data() + byte_begin_[state], byte_begin_[state + 1] - byte_begin_[state]};
  }
  std::span<const RuleEdge> rule_edges(uint32_t state) const {
    return {rule_edges_.data() + rule_begin_[state], rule_begin_[state + 1] - rule_begin_[state]};
  }
  /// Every byte edge (rule edge) of a rule's states, in state order: a rule's states are
  /// numbered in one block, and so are their edges.
  std::span<const ByteEdge> rule_byte_edges(uint32_t rule) const {
    const uint32_t b = byte_begin_[rule_start(rule)], e = byte_begin_[rule_end(rule)];
    return {byte_edges_.data() + b, e - b};
  }
  std::span<const RuleEdge> rule_call_edges(uint32_t rule) const {
    const uint32_t b = rule_begin_[rule_start(rule)], e = rule_begin_[rule_end(rule)];
    return {rule_edges_.data() + b, e - b};
  }

  /// True when the state has no rule edges and is not final: reading a byte from it is a
  /// plain DFA step.
  bool is_simple(uint32_t state) const { return state_simple_[state] != 0; }

  /// Mask class of a state: states of one class have the same token classification
  /// (TokenMaskCache computes it once per class). Classes are numbered 0.. in order of their
  /// first state.
  uint32_t mask_class(uint32_t state) const { return state_class_[state]; }
  uint32_t num_mask_classes() const { return static_cast<uint32_t>(class_state_.size()); }
  /// The first state of a mask class.
  uint32_t mask_class_state(uint32_t mask_class) const { return class_state_[mask_class]; }

  /// 256-bit byte set.
  using ByteSet = std::array<uint64_t, 4>;
  /// Adds the bytes lo..hi (lo <= hi) to `set`, a 64-bit word at a time.
  static void add_byte_range(ByteSet& set, unsigned lo, unsigned hi) {
    for (unsigned w = lo >> 6; w <= (hi >> 6); ++w) {
      const unsigned a = w == (lo >> 6) ? (lo & 63) : 0, z = w == (hi >> 6) ? (hi & 63) : 63;
      set[w] |= (~uint64_t{0} >> (63 - z)) & (~uint64_t{0} << a);
    }
  }
  /// The smallest byte of `set` that is at least `from` (0..256), or 256 when there is none:
  /// at most four word scans.
  static unsigned next_byte(const ByteSet& set, unsigned from) {
    for (unsigned w = from >> 6; w < 4; ++w) {
      const uint64_t bits = w == (from >> 6) ? set[w] & (~uint64_t{0} << (from & 63)) : set[w];
      if (bits != 0) return w * 64 + static_cast<unsigned>(std::countr_zero(bits));
    }
    return 256;
  }
  /// The number of bytes in `set`.
  static unsigned byte_count(const ByteSet& set) {
    unsigned n = 0;
    for (const uint64_t w : set) n += static_cast<unsigned>(std::popcount(w));
    return n;
  }
  /// Bytes that can come right after `rule` completes, in some context (FOLLOW set): a
  /// superset, widened to the grammar's follow_classes (Grammar::follow_classes) and, for
  /// escape rules, every byte. Used only by the token masks (uncertain or rejected tokens,
  /// mask keys and classes).
  bool can_follow(uint32_t rule, uint8_t byte) const {
    return (follow_[rule][byte >> 6] >> (byte & 63)) & 1;
  }
  /// The whole FOLLOW set of `rule` (can_follow() for every byte).
  const ByteSet& rule_follow(uint32_t rule) const { return follow_[rule]; }
  /// Bytes that can start a non-empty string of `rule` (FIRST set of its start state,
  /// through the sub-rules it starts with).
  const ByteSet& rule_first(uint32_t rule) const { return rule_first_[rule]; }
  /// True when the output may end right after `rule` completes.
  bool can_end_after(uint32_t rule) const { return follow_end_[rule] != 0; }

  /// The source grammar (after validation), for printing and diagnostics.
  const Grammar& grammar() const { return grammar_; }

 private:
  friend class AutomatonBuilder;
  friend struct AutomatonAnalysis;
  Grammar grammar_;
  uint32_t root_ = 0;
  std::vector<uint32_t> rule_start_;
  std::vector<uint8_t> rule_nullable_;
  // The names of the escape rules, numbered after the grammar's (the others are the grammar's).
  std::vector<std::string> escape_rule_names_;
  std::vector<uint32_t> state_rule_;
  std::vector<uint8_t> state_final_;
  std::vector<uint32_t> byte_begin_;  // num_states + 1
  std::vector<ByteEdge> byte_edges_;
  std::vector<uint32_t> rule_begin_;  // num_states + 1
  std::vector<RuleEdge> rule_edges_;
  std::vector<uint8_t> state_simple_;
  std::vector<ByteSet> follow_;
  std::vector<ByteSet> rule_first_;
  std::vector<uint8_t> follow_end_;
  std::vector<uint32_t> rule_component_;
  std::vector<std::vector<uint32_t>> rule_automaton_key_;
  std::vector<uint32_t> state_class_;
  std::vector<uint32_t> class_state_;
};

}  // namespace lockstep
