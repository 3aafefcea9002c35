// sampler/sampler.h — public API of the sampler layer: logits processors and the chain.
//
// Every processor has one interface (as llama.cpp's samplers do): apply() transforms the
// candidate list of one decoding step, accept() records the token finally chosen,
// reset() forgets history, clone() copies. A SamplerChain owns processors and runs them
// in order; its last member is a selector (greedy or a seeded random draw) that sets
// Candidates::selected.
//
// The standard chain (make_sampler_chain), on logits: float[vocab_size] of the last position
// (docs/decoding.md describes each processor, its source and its cost):
//   shaping:   logit bias → repetition penalty → frequency/presence penalties → grammar mask
//   sampling:  temperature → top-k → typical → top-p → min-p → ε-cutoff → η-cutoff → draw
//              (or temperature → mirostat v1/v2, which truncates and draws; or greedy).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

class EarleyMatcher;
class Vocabulary;

struct TokenCandidate {
  int32_t id;
  float logit;
  float p;  ///< probability; valid after softmax
};

/// The candidates of one step. Processors may reorder and drop entries.
struct Candidates {
  std::vector<TokenCandidate> data;
  bool sorted = false;     ///< data sorted by logit, descending
  int32_t selected = -1;   ///< token id chosen by the selector
  /// Fills from logits: float[n_vocab] (ids 0..n_vocab-1).
  void assign(std::span<const float> logits);
  /// Softmax over `data` (numerically stable; sorts descending first). Sets p.
  void softmax();
};

/// Draws from a distribution held as candidates (their `p`) with a uniform `u` in [0, 1):
/// the first candidate, in their order, whose cumulative mass exceeds u · the total mass;
/// -1 when there is none.
int32_t draw_from(const Candidates& dist, double u);

class LogitsProcessor {
 public:
  virtual ~LogitsProcessor() = default;
  virtual const char* name() const = 0;
  virtual void apply(Candidates& c) = 0;
  /// Records the token chosen at this step (advances state: grammar, penalty history).
  virtual void accept(int32_t /*token*/) {}
  /// Records a context token that was not sampled (the prompt): only history-keeping
  /// processors (penalties) use it; the grammar does not see it.
  virtual void accept_context(int32_t /*token*/) {}
  /// Undoes the last `n` accept() calls (for tokens replaced after the fact, e.g. when
  /// jump-forward re-tokenizes across a boundary). Throws std::out_of_range past the start.
  virtual void rollback(size_t /*n*/) {}
  virtual void reset() {}
  virtual std::unique_ptr<LogitsProcessor> clone() const = 0;
};

/// Adds a fixed value to chosen logits (OpenAI `logit_bias`; -inf bans a token).
std::unique_ptr<LogitsProcessor> make_logit_bias(std::map<int32_t, float> bias);

/// Over the last `last_n` accepted tokens (last_n < 0: all): CTRL repetition penalty
/// (Keskar et al. 2019: logit / θ if positive, logit · θ if negative), then OpenAI's
/// frequency and presence penalties: z − c·λ_freq − 1[c>0]·λ_pres, c = occurrences.
std::unique_ptr<LogitsProcessor> make_penalties(int32_t last_n, float repeat, float frequency,
                                                float presence);

/// Drops the tokens the grammar disallows (−inf). The matcher is not owned (clones share
/// it); accept() advances it and rollback() rolls it back, so it stays in lockstep with the
/// chain; a token budget set on the matcher (EarleyMatcher::set_max_tokens) applies.
/// Throws std::runtime_error in accept() if the chosen token is not allowed.
///
/// Token healing (Guidance, and llguidance's process_prompt): with a non-empty
/// `healed_prefix` — the bytes of the prompt's last token(s), removed from the prompt —
/// the first tokens must spell those bytes again: a token is allowed when its bytes are a
/// proper prefix of what remains of them, or start with all of it and continue with bytes
/// the grammar allows (within the budget). So a prompt that ends inside a word continues
/// the way the tokenizer would have split the whole text. `vocab` gives the tokens' bytes;
/// `matcher` may be null (no grammar) when healing.
std::unique_ptr<LogitsProcessor> make_grammar_mask(EarleyMatcher* matcher, const Vocabulary* vocab = nullptr,
                                                   std::string healed_prefix = {});

/// The ids of every token whose bytes are exactly `text` (logit bias by text: ` Paris`
/// names every token spelled " Paris"). Empty when none is.
std::vector<int32_t> tokens_spelled(const Vocabulary& vocab, std::string_view text);

/// Divides logits by t (t > 0).
std::unique_ptr<LogitsProcessor> make_temperature(float t);
/// Keeps the k largest logits (k <= 0: no-op). Fan et al. 2018.
std::unique_ptr<LogitsProcessor> make_top_k(int32_t k);
/// Nucleus sampling (Holtzman et al. 2020): keeps the most probable tokens up to and
/// including the first whose cumulative probability reaches p (p >= 1: no-op).
std::unique_ptr<LogitsProcessor> make_top_p(float p);
/// Keeps tokens with probability >= p · (largest probability) (p <= 0: no-op).
std::unique_ptr<LogitsProcessor> make_min_p(float p);
/// Locally typical sampling (Meister et al. 2023, "Locally Typical Sampling", TACL): with H the
/// entropy of the distribution, keeps the tokens whose information content −log p is closest
/// to H, in that order, until their mass reaches p (the one that crosses stays; p >= 1: no-op).
std::unique_ptr<LogitsProcessor> make_typical(float p);
/// ε-sampling (Hewitt et al. 2022, "Truncation Sampling as Language Model Desmoothing"): drops
/// tokens with probability < ε; the most probable one always stays (ε <= 0: no-op).
std::unique_ptr<LogitsProcessor> make_epsilon_cutoff(float epsilon);
/// η-sampling (Hewitt et al. 2022): drops tokens with probability < η = min(ε, √ε·exp(−H)),
/// H the entropy in nats; the most probable one always stays (ε <= 0: no-op).
std::unique_ptr<LogitsProcessor> make_eta_cutoff(float epsilon);
/// Mirostat (Basu et al. 2021, "Mirostat: a neural text decoding algorithm that directly
/// controls perplexity", ICLR), a selector: keeps the surprise −log₂ p of the drawn tokens
/// near `tau` (bits) with a feedback value μ (starts at 2τ; after each drawn token
/// μ ← μ − eta·(surprise − τ)). Version 1 estimates the Zipf exponent ŝ from the 100 most
/// probable tokens and keeps the top k = ((ε̂·2^μ)/(1 − N^−ε̂))^(1/ŝ), ε̂ = ŝ − 1, N =
/// `n_vocab`; version 2 drops tokens with surprise > μ. Then draws like make_draw(seed).
/// rollback() restores μ; a token accepted without being drawn (forced) leaves μ unchanged.
/// Throws std::invalid_argument for a version other than 1 or 2, or tau / eta <= 0.
std::unique_ptr<LogitsProcessor> make_mirostat(int version, float tau, float eta, size_t n_vocab, uint64_t seed);
/// μ of a make_mirostat() processor (tests, --stats). Throws std::invalid_argument otherwise.
double mirostat_mu(const LogitsProcessor& p);
/// Selects the largest logit (ties: lowest id); none when every logit is -inf.
std::unique_ptr<LogitsProcessor> make_greedy();
/// Softmax, then draws from the distribution with a 64-bit Mersenne Twister seeded once
/// (at construction and on reset()): the same seed gives the same draws. Draws none when
/// every logit is -inf.
std::unique_ptr<LogitsProcessor> make_draw(uint64_t seed);

class SamplerChain {
 public:
  SamplerChain() = default;
  SamplerChain(const SamplerChain& other);
  SamplerChain& operator=(const SamplerChain& other);
  SamplerChain(SamplerChain&&) = default;
  SamplerChain& operator=(SamplerChain&&) = default;

  void add(std::unique_ptr<LogitsProcessor> p) { processors_.push_back(std::move(p)); }
  /// Marks where the sampling stage starts: the processors added from now on reshape the
  /// distribution to draw from (temperature, truncation, the selector); those before shape
  /// the logits themselves (bias, penalties, grammar mask).
  void begin_sampling_stage() { sampling_stage_ = processors_.size(); }
  /// Inserts `p` where the sampling stage starts, as its first processor (contrastive
  /// decoding: after the grammar mask, before temperature).
  void insert_at_sampling_stage(std::unique_ptr<LogitsProcessor> p);
  /// Runs the shaping stage alone (bias, penalties, grammar mask) on `c`.
  void shape(Candidates& c);
  /// Called in sample() with the candidates as the sampling stage receives them: the
  /// logits after bias, penalties and grammar mask (log-probabilities after the mask,
  /// --logprobs). Not copied with the chain.
  void set_observer(std::function<void(const Candidates&)> observer) { observer_ = std::move(observer); }
  /// Runs every processor on `c`. Returns the selected id, or -1 when nothing is left
  /// (e.g. the grammar allows no token) or every token left has a logit of -inf.
  int32_t sample(Candidates& c);
  /// Convenience: candidates from logits: float[n_vocab], then sample.
  int32_t sample(std::span<const float> logits);
  /// The distribution sample() draws from, without drawing: every processor but the last
  /// (the selector) runs on `c`, then `c` holds the candidates left with their
  /// probabilities — after softmax when the selector is the draw; for greedy, its choice
  /// alone with probability 1 (none when nothing has a finite logit). Speculative decoding
  /// compares these. Throws std::invalid_argument when the chain ends in another selector
  /// (mirostat: its truncation depends on its own state).
  void distribution(Candidates& c);
  void accept(int32_t token);
  void accept_context(int32_t token);
  /// Undoes the last `n` accept() calls in every processor.
  void rollback(size_t n);
  void reset();
  size_t size() const { return processors_.size(); }
  const LogitsProcessor& at(size_t i) const { return *processors_[i]; }

 private:
  std::vector<std::unique_ptr<LogitsProcessor>> processors_;
  size_t sampling_stage_ = SIZE_MAX;
  std::function<void(const Candidates&)> observer_;
  Candidates scratch_;
};

struct SamplerParams {
  std::map<int32_t, float> logit_bias;
  int32_t penalty_last_n = 64;
  float repeat_penalty = 1.0f;     ///< 1 = off
  float frequency_penalty = 0.0f;  ///< 0 = off
  float presence_penalty = 0.0f;   ///< 0 = off
  float temperature = 0.8f;        ///< <= 0: greedy
  int32_t top_k = 40;              ///< <= 0: off
  float top_p = 0.95f;             ///< >= 1: off
  float min_p = 0.05f;             ///< <= 0: off
  float typical_p = 1.0f;          ///< >= 1: off
  float epsilon_cutoff = 0.0f;     ///< <= 0: off
  float eta_cutoff = 0.0f;         ///< <= 0: off
  int32_t mirostat = 0;            ///< 0: off; 1 or 2: mirostat in place of top-k … η and the draw
  float mirostat_tau = 5.0f;       ///< target surprise, bits
  float mirostat_eta = 0.1f;       ///< learning rate of μ
  uint64_t seed = 0;
};

/// The standard chain in the documented order; `matcher` may be null (unconstrained).
/// With a `healed_prefix` (and `vocab`), the grammar-mask position heals it (see
/// make_grammar_mask). Processors that are off are left out. Throws std::invalid_argument
/// for out-of-range parameters (negative penalties, top_p outside (0, 1], min_p outside
/// [0, 1], typical-p outside (0, 1], ε or η cut-offs outside [0, 1), mirostat not 0, 1 or 2,
/// its τ or η <= 0). `vocab` gives mirostat v1 its vocabulary size (else the candidates').
SamplerChain make_sampler_chain(const SamplerParams& params, EarleyMatcher* matcher,
                                const Vocabulary* vocab = nullptr, std::string healed_prefix = {});

}  // namespace lockstep
