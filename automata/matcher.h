// automata/matcher.h — public API of the automata layer: the grammar matcher.
//
// A GrammarMatcher follows one sequence: it accepts tokens (or raw bytes) one step at a
// time, rolls back steps, and computes the token bitmask of the next step — the set of
// tokens whose bytes keep the output a prefix of some sentence of the grammar.
//
//   auto grammar = CompiledGrammar::compile(parse_gbnf(text));   // shared, immutable
//   GrammarMatcher m(grammar, vocab);                              // one per sequence
//   std::vector<uint32_t> mask(vocab->bitmask_words());
//   m.fill_next_token_bitmask(mask);   // bit i of mask[i / 32] set = token i allowed
//   m.accept_token(id);
//
// Thread-safety: a CompiledGrammar and a Vocabulary may be shared by any number of
// matchers on any threads; a matcher itself is not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "automata/compiled_grammar.h"
#include "automata/earley.h"
#include "automata/vocabulary.h"

namespace lockstep {

class GrammarMatcher {
 public:
  /// Throws ParserLimitError if even the empty prefix exceeds the parser limits.
  GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar,
                 std::shared_ptr<const Vocabulary> vocabulary, ParserLimits limits = {});

  /// Accepts token `id` (0 <= id < vocabulary size). Text tokens must continue the
  /// grammar; an end-of-generation token is accepted only when is_accepting(), and then
  /// terminates the matcher. Control tokens are rejected. Returns false (state unchanged)
  /// on rejection. Throws std::out_of_range for a bad id, ParserLimitError past a limit.
  bool accept_token(int32_t id);
  /// Accepts raw bytes as one step (all of them or, returning false, none).
  bool accept_bytes(std::string_view bytes);
  /// Undoes the last `n_steps` accepted tokens / byte strings (including a terminating
  /// end-of-generation token). Throws std::out_of_range when n_steps > num_steps().
  void rollback(size_t n_steps);
  size_t num_steps() const { return history_.size(); }

  /// True when the output so far is a complete sentence of the grammar.
  bool is_accepting() const { return parser_.accepting(); }
  /// True after an end-of-generation token was accepted.
  bool is_terminated() const { return terminated_; }

  /// Writes the allowed-token bitmask of the next step.
  /// words: uint32_t[vocabulary->bitmask_words()]; bit (id % 32) of words[id / 32] is set
  /// iff token id is allowed. End-of-generation ids are set iff is_accepting(). Once
  /// terminated, no bit is set. Throws std::invalid_argument when `words` is too small.
  void fill_next_token_bitmask(std::span<uint32_t> words);

  /// Back to the empty output.
  void reset();
  /// An independent copy (same grammar and vocabulary) in the same state.
  GrammarMatcher fork() const { return *this; }

  const Vocabulary& vocabulary() const { return *vocabulary_; }
  const CompiledGrammar& grammar() const { return *grammar_; }

 private:
  static constexpr uint32_t kEogStep = UINT32_MAX;
  std::shared_ptr<const CompiledGrammar> grammar_;
  std::shared_ptr<const Vocabulary> vocabulary_;
  EarleyParser parser_;
  std::vector<uint32_t> history_;  // bytes consumed by each step, or kEogStep
  bool terminated_ = false;
};

}  // namespace lockstep
