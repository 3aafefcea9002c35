// include/lockstep/matcher.h — GrammarMatcher: one sequence's position in a grammar.
//
// A matcher accepts tokens one step at a time, rolls steps back, and fills the token
// bitmask of the next step (lockstep/bitmask.h): the tokens whose bytes keep the output a
// prefix of a sentence of the grammar, plus the stop tokens where the output is complete.
//
//   lockstep::TokenizerInfo info = lockstep::TokenizerInfo::from_file("tokenizer.json");
//   lockstep::GrammarCompiler compiler(info);
//   lockstep::CompiledGrammar grammar = compiler.compile_json_schema(R"({"type":"integer"})");
//   lockstep::GrammarMatcher matcher(grammar);
//   std::vector<uint32_t> words(info.bitmask_words());
//   matcher.fill_next_token_bitmask({words, info.vocab_size()});  // then mask the logits
//   matcher.accept_token(id);                                     // the token drawn
//
// The parse is an Earley parse over the grammar's byte automata (Earley 1970; the rule
// automata as in XGrammar, arXiv:2411.15100); a mask costs microseconds when its parse
// configuration was seen before by any matcher of the same CompiledGrammar (docs/masks.md).
//
// Thread-safety: a matcher is not thread-safe; different matchers may run on different
// threads, sharing one CompiledGrammar. fill_next_token_bitmasks fills many at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/bitmask.h"
#include "lockstep/compiler.h"
#include "lockstep/errors.h"

namespace lockstep {

class EarleyMatcher;

class GrammarMatcher {
 public:
  /// A matcher at the empty output. `max_tokens`: length-aware closing (see
  /// set_max_tokens); SIZE_MAX: none. Throws LimitError if even the empty output exceeds
  /// the parser limits.
  explicit GrammarMatcher(const CompiledGrammar& grammar, size_t max_tokens = SIZE_MAX);
  ~GrammarMatcher();
  GrammarMatcher(GrammarMatcher&&) noexcept;
  GrammarMatcher& operator=(GrammarMatcher&&) noexcept;

  /// Accepts token `id` (0 <= id < vocab_size). A text token must continue the grammar; a
  /// stop token is accepted only when is_accepting(), and terminates the matcher; other
  /// special tokens are rejected. Returns false and leaves the state unchanged on rejection.
  /// Throws std::out_of_range for an id outside the vocabulary, LimitError past a parser
  /// limit.
  bool accept_token(int32_t id);
  /// Accepts raw output bytes as one step (all of them, or none and false).
  bool accept_string(std::string_view bytes);
  /// The number of leading tokens of `ids` the matcher would accept in a row (a stop token
  /// counts when the output is complete before it): for checking a speculative draft. The
  /// state is unchanged.
  size_t validate_tokens(std::span<const int32_t> ids);

  /// Writes the next step's token bitmask into `bitmask` (words past the vocabulary
  /// cleared). Once terminated, no bit is set. Throws std::invalid_argument when the view is
  /// over another vocabulary size.
  void fill_next_token_bitmask(TokenBitmask bitmask);

  /// Undoes the last `n` accepted steps (tokens or strings; the stop token too), O(bytes
  /// undone). Throws std::out_of_range when n > num_steps().
  void rollback(size_t n);
  size_t num_steps() const;
  /// Back to the empty output.
  void reset();
  /// An independent matcher in the same state (same grammar, shared caches).
  GrammarMatcher fork() const;

  /// The output so far is a complete sentence of the grammar.
  bool is_accepting() const;
  /// A stop token was accepted.
  bool is_terminated() const;

  /// The longest byte string the grammar forces from here (empty when the next byte is not
  /// determined or the output may end here), at most `max_bytes` long: jump-forward
  /// decoding. The state is unchanged.
  std::string find_jump_forward_string(size_t max_bytes = 4096);

  /// Length-aware closing (docs/closing.md): the sequence takes at most `max_tokens` tokens
  /// in all, counted from the empty output and including a final stop token. Masks then
  /// drop every token after which no complete output fits in what remains.
  void set_max_tokens(size_t max_tokens);
  /// Text tokens that complete the output from here (the fewest tokens spelling the
  /// shortest completion: an upper bound on the true minimum); 0 when is_accepting(),
  /// SIZE_MAX when the vocabulary cannot spell a completion.
  size_t min_tokens_to_accept();

  const CompiledGrammar& compiled_grammar() const;
  /// The engine's matcher (for code inside lockstep).
  EarleyMatcher& engine();

 private:
  GrammarMatcher(CompiledGrammar grammar, std::unique_ptr<EarleyMatcher> engine);
  CompiledGrammar grammar_;
  std::unique_ptr<EarleyMatcher> engine_;
};

/// Fills the bitmasks of many matchers on `threads` threads (0: one per core). words:
/// uint32_t[matchers.size() × stride], stride >= each matcher's vocabulary's bitmask words;
/// matcher i writes row i. A null matcher's row is left as it is. Throws the first error a
/// matcher raised, after all threads finished.
void fill_next_token_bitmasks(std::span<GrammarMatcher* const> matchers, std::span<uint32_t> words, size_t stride,
                              unsigned threads = 0);

}  // namespace lockstep
