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
#include <stdexcept>
#include <string_view>
#include <vector>

#include "automata/compiled_grammar.h"

namespace lockstep {

/// The parser hit one of its explicit limits (see ParserLimits).
class ParserLimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ParserLimits {
  /// Items one Earley set may hold; more means the grammar is too ambiguous to follow.
  uint32_t max_items_per_set = 1u << 17;
};

class EarleyParser {
 public:
  struct Item {
    uint32_t state;
    uint32_t origin;
  };

  explicit EarleyParser(const CompiledGrammar& grammar, ParserLimits limits = {});

  /// Back to the start (no bytes consumed).
  void reset();
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

  /// The items of the current (last) set.
  std::span<const Item> current_items() const {
    return {items_.data() + set_begin_[set_begin_.size() - 2],
            set_begin_.back() - set_begin_[set_begin_.size() - 2]};
  }
  const CompiledGrammar& grammar() const { return *grammar_; }

 private:
  void add(uint32_t state, uint32_t origin);
  void close_set();  // prediction + completion over the newest set
  void begin_set();
  void abandon_set();

  const CompiledGrammar* grammar_;
  ParserLimits limits_;
  std::vector<Item> items_;
  // Set k holds items_[set_begin_[k] .. set_begin_[k+1]); the last set is open-ended
  // while it is built and closed by pushing its end.
  std::vector<uint32_t> set_begin_;
  std::vector<uint8_t> set_accepting_;
  // Open-addressing dedupe table for the set under construction.
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> stamps_;
  uint32_t stamp_ = 0;
};

}  // namespace lockstep
