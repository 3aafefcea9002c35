// automata/matcher.h — the automata layer's matcher (the public one, include/lockstep/matcher.h, wraps it).
//
// An EarleyMatcher follows one sequence: it accepts tokens (or raw bytes) one step at a
// time, rolls back steps, and computes the token bitmask of the next step — the set of
// tokens whose bytes keep the output a prefix of some sentence of the grammar.
//
//   auto grammar = GrammarAutomaton::compile(parse_gbnf(text));          // immutable, shared
//   auto cache = std::make_shared<TokenMaskCache>(grammar, vocabulary);  // shared per vocabulary
//   EarleyMatcher m(cache);                                             // one per sequence
//   std::vector<uint32_t> mask(vocabulary->bitmask_words());
//   m.fill_next_token_bitmask(mask);   // bit (i % 32) of mask[i / 32] set = token i allowed
//                                      // (automata/token_bitmask.h reads and writes them)
//   m.accept_token(id);
//
// How a mask is made: the parse state's kernel items (those not derived by prediction in
// the current position) each contribute their state's cached accepted set; tokens that
// would complete a rule in mid-token are resolved by probing the real parse state with
// their distinct suffixes (TokenMaskCache). Whole masks are also cached per parse
// configuration (the kernel states and, recursively, what waits on them), shared by every
// matcher of one TokenMaskCache, so a configuration seen before, by this sequence or
// another, costs a copy.
//
// Thread-safety: GrammarAutomaton, Vocabulary and TokenMaskCache may be shared by any number
// of matchers on any threads; a matcher itself is not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "automata/closing.h"
#include "automata/grammar_automaton.h"
#include "automata/earley.h"
#include "automata/mask_cache.h"
#include "automata/next_bytes.h"
#include "automata/vocabulary.h"

namespace lockstep {

class EarleyMatcher {
 public:
  /// A matcher using a shared mask cache. Throws ParserLimitError if even the empty
  /// prefix exceeds the parser limits.
  explicit EarleyMatcher(std::shared_ptr<TokenMaskCache> cache);
  /// A matcher with a private mask cache (convenient for one sequence).
  EarleyMatcher(std::shared_ptr<const GrammarAutomaton> grammar,
                 std::shared_ptr<const Vocabulary> vocabulary, ParserLimits limits = {});

  /// Accepts token `id` (0 <= id < vocabulary size). Text tokens must continue the
  /// grammar; an end-of-generation token is accepted only when is_accepting(), and then
  /// terminates the matcher. Control tokens are rejected. Returns false (state unchanged)
  /// on rejection. Throws std::out_of_range for a bad id, ParserLimitError past a limit.
  bool accept_token(int32_t id);
  /// Accepts raw bytes as one step (all of them or, returning false, none).
  bool accept_bytes(std::string_view bytes);
  /// Undoes the last `n_steps` accepted tokens / byte strings (including a terminating
  /// end-of-generation token): O(bytes undone). Throws std::out_of_range when
  /// n_steps > num_steps().
  void rollback(size_t n_steps);
  size_t num_steps() const { return history_.size(); }

  /// True when the output so far is a complete sentence of the grammar.
  bool is_accepting() const { return parser_.accepting(); }
  /// True after an end-of-generation token was accepted.
  bool is_terminated() const { return terminated_; }

  /// Writes the allowed-token bitmask of the next step.
  /// words: uint32_t[>= vocabulary().bitmask_words()]; bit (id % 32) of words[id / 32] is
  /// set iff token id is allowed; bits past the vocabulary are cleared. End-of-generation
  /// ids are set iff is_accepting(). Once terminated, no bit is set. Throws
  /// std::invalid_argument when `words` is too small.
  void fill_next_token_bitmask(std::span<uint32_t> words);

  /// Length-aware closing (docs/closing.md). From now on the sequence takes at most
  /// `max_tokens` tokens in all, counted from the empty output (so num_steps() of them are
  /// taken already) and including a final end-of-generation token when the vocabulary has
  /// one: fill_next_token_bitmask() then also drops every token after which no completion
  /// would fit in what remains, and with one token left it allows end of generation only.
  /// Every token the model may still choose keeps a complete sentence within reach, so a
  /// generation that starts within budget (min_tokens_to_accept() + eog_tokens() <=
  /// max_tokens) ends complete. SIZE_MAX (the default) turns it off.
  void set_max_tokens(size_t max_tokens);
  size_t max_tokens() const { return max_tokens_; }
  /// Text tokens that complete the output from here: the fewest vocabulary tokens spelling
  /// the shortest completion in bytes (or a completion this matcher kept from an earlier
  /// step, when that spells shorter) — an upper bound on the true minimum, 0 when
  /// is_accepting(). SIZE_MAX when the vocabulary cannot spell it. O(parse items) per
  /// call after the first (per grammar and vocabulary: O(E log V) once).
  size_t min_tokens_to_accept();
  /// The completion min_tokens_to_accept() counts (empty when too long to build).
  std::string completion_text();
  /// Tokens an ending takes besides the text: 1 when the vocabulary has an
  /// end-of-generation token, else 0.
  size_t eog_tokens() const { return vocabulary().eog_ids().empty() ? 0 : 1; }

  /// The bytes that can come next (the union of the current items' byte edges).
  GrammarAutomaton::ByteSet next_bytes() const { return lockstep::next_bytes(parser_); }

  /// The longest byte string the grammar forces next (empty when the next byte is not
  /// determined or the output may end here); at most `max_bytes`. Does not change the state.
  std::string jump_forward_bytes(size_t max_bytes = 4096);

  /// The key under which the mask engine caches this parse configuration's mask (kernel
  /// items and interned contexts; the same key, the same language from here on). False when
  /// the configuration has none (contexts nested past the interning depth): then two
  /// configurations cannot be compared. Does not change the state.
  bool configuration_key(std::vector<uint32_t>& key);

  /// Back to the empty output.
  void reset();
  /// An independent copy (same grammar, vocabulary and shared caches) in the same state.
  EarleyMatcher fork() const;

  const Vocabulary& vocabulary() const { return cache_->vocabulary(); }
  const GrammarAutomaton& grammar() const { return cache_->grammar(); }
  const TokenMaskCache& cache() const { return *cache_; }

  /// Turns the whole-mask configuration cache on (default) or off (benchmarks of the
  /// composition path).
  void set_configuration_cache(bool on) { use_configurations_ = on; }

  /// Counters of the configuration cache, for benchmarks.
  struct Counters {
    size_t masks = 0, configuration_hits = 0, probes = 0;
  };
  const Counters& counters() const { return counters_; }

 private:
  static constexpr uint32_t kEogStep = UINT32_MAX;
  // Configuration signatures: an interned id for "what happens when rule R, started at
  // position o, completes", or kNoContext when it cannot be described finitely.
  static constexpr uint32_t kNoContext = UINT32_MAX;
  uint32_t context_id(uint32_t rule, uint32_t origin, int depth);
  bool signature(std::span<const EarleyParser::Item> kernel, std::vector<uint32_t>& out);
  void collect_kernel();  // kernel_ of the current set, pruned; refreshes the context memo
  /// Drops the kernel items whose mask another kernel item's mask contains (see the .cpp).
  void prune_implied(std::vector<EarleyParser::Item>& kernel) const;
  void compose(std::span<const EarleyParser::Item> kernel, std::span<uint32_t> words);
  // The mask of a kernel item: its state's, or near the forced end of an automaton rule whose
  // caller goes on into another one, the continued mask (TokenMaskCache::continued).
  const StateMask& item_mask(const EarleyParser::Item& item);
  // Length-aware closing (see set_max_tokens).
  CompletionTracker& tracker();
  uint64_t current_completion(std::string& text);  // tokens of the best completion known
  void apply_budget(std::span<uint32_t> mask, const std::vector<uint32_t>* key);
  void push_plan(std::string_view bytes);

  std::shared_ptr<TokenMaskCache> cache_;
  EarleyParser parser_;
  std::vector<uint32_t> history_;  // bytes consumed by each step, or kEogStep
  bool terminated_ = false;
  bool use_configurations_ = true;

  // Per Earley set: the context ids computed for the rules started there, and — once a set
  // is asked about more than a few rules (a root of thousands of alternatives) — an index
  // from a rule to the set's items with a rule edge to it, so each id costs its callers,
  // not a scan of the whole set.
  struct SetContexts {
    std::vector<std::pair<uint32_t, uint32_t>> ids;     // (rule, id): the first few
    std::unordered_map<uint32_t, uint32_t> more_ids;     // past those
    std::unordered_map<uint32_t, std::vector<uint32_t>> callers;  // rule → item indices
    bool indexed = false;
    const uint32_t* find(uint32_t rule) const;
    void set(uint32_t rule, uint32_t id);
  };
  std::vector<SetContexts> context_memo_;
  // context_id()'s (state, parent context) pairs, one list per recursion depth, and the
  // description it interns: kept from call to call (a configuration of a thousand member
  // items asks for a thousand ids, each allocated twice before).
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> context_pairs_;
  std::vector<uint32_t> context_desc_;
  uint64_t memo_generation_ = 0;  // the ConfigurationCache generation of context_memo_'s ids
  std::vector<EarleyParser::Item> kernel_;
  std::vector<uint32_t> key_;
  std::vector<char> probe_result_;
  std::vector<const StateMask*> item_masks_;  // compose()'s, per kernel item
  Counters counters_;

  size_t max_tokens_ = SIZE_MAX;
  std::unique_ptr<CompletionTracker> tracker_;
  // plans_[j]: a completion of the state after j steps, kept from the step before it (the
  // rest of that step's completion when the step's token started it); empty optional: none.
  std::vector<std::optional<std::string>> plans_;
  // The completion a budget-binding mask of this step used, for the next step's plan.
  std::optional<std::string> step_plan_;
};

/// Fills the bitmasks of many matchers (one sequence each) on `threads` threads (0:
/// hardware concurrency). words: uint32_t[matchers.size() × stride], stride >= each
/// matcher's bitmask_words(); matcher i writes words[i × stride, (i + 1) × stride).
void fill_next_token_bitmasks(std::span<EarleyMatcher* const> matchers, std::span<uint32_t> words,
                              size_t stride, unsigned threads = 0);

}  // namespace lockstep
