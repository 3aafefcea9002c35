// runtime/generator.h — the decode loop that keeps model, grammar matcher and sampler
// in lockstep, and the loading of a model with its tokenizer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "automata/grammar_automaton.h"
#include "automata/mask_cache.h"
#include "runtime/model.h"
#include "runtime/tokenizer.h"
#include "sampler/inspector.h"
#include "sampler/sampler.h"

namespace lockstep {

/// A model and the tokenizer it was trained with.
struct LoadedModel {
  std::shared_ptr<const LlamaModel> model;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::string model_path;
  std::string tokenizer_path;
};

/// Directories searched, in order, for the bundled model (stories260K.bin + tok512.bin):
/// ../shared/models/stories260K beside the checkout, the same path relative to the working
/// directory, $LOCKSTEP_MODEL_DIR (and its stories260K/), and the download cache
/// ($XDG_CACHE_HOME or ~/.cache)/lockstep/stories260K that scripts/fetch-model.sh fills.
std::vector<std::string> bundled_model_dirs();

/// Loads the model at `model_path` (a llama2.c .bin file, or a directory holding one with
/// its tokenizer), or the bundled model when empty. `tokenizer_path` overrides the
/// tokenizer found beside the model. Throws std::runtime_error listing where it looked
/// (and how to get the bundled model) when nothing is found; ModelFormatError /
/// TokenizerError for malformed files.
LoadedModel load_model(const std::string& model_path, const std::string& tokenizer_path = "");

enum class StopReason {
  kEndOfGeneration,  ///< an end-of-generation token was chosen
  kMaxTokens,        ///< max_tokens were generated
  kContextFull,      ///< the context (KV cache) is full
  /// No token had a finite probability: the grammar allowed none the vocabulary can spell,
  /// or logit biases of -inf removed every one it allowed. The output is incomplete.
  kNoTokenAllowed,
};
const char* to_string(StopReason r);

struct GenerateOptions {
  std::string prompt;
  int32_t max_tokens = 256;  ///< tokens to generate, a final end-of-generation token included;
                             ///< < 0: until end of generation / the context is full
  SamplerParams sampling;
  std::shared_ptr<const GrammarAutomaton> grammar;  ///< null: unconstrained
  /// The token masks of `grammar` for the model's vocabulary, to keep across calls that use
  /// the same grammar (a service's requests, repeated runs): masks computed by one call are
  /// read by the next. Null: a cache made for this call. generate() throws
  /// std::invalid_argument when it was made for another grammar or vocabulary. Thread-safe:
  /// concurrent calls may share one.
  std::shared_ptr<TokenMaskCache> mask_cache;
  int32_t context_length = 0;  ///< KV-cache tokens (<= 0: the model's, capped at 4096)
  /// Threads of the forward pass (InferenceState; 0: automatic). The output does not
  /// depend on it.
  int32_t threads = 0;
  /// Append the bytes the grammar forces without a model choice, as the tokenizer would
  /// tokenize them (runtime/jump_forward.h); the KV cache takes them in one pass.
  bool jump_forward = true;
  /// Back the prompt up by its last token and make the first tokens re-spell it (sampler.h,
  /// make_grammar_mask), so a prompt ending inside a word continues as one token would.
  bool token_healing = false;
  /// Length-aware closing (EarleyMatcher::set_max_tokens). Off, an output may end cut at
  /// the budget (GenerateResult::complete false): for comparison only.
  bool length_aware_closing = true;
  /// When the KV cache is full: false (default) stops (StopReason::kContextFull, and the
  /// context bounds the budget); true applies llama.cpp's context shift — keep the first
  /// `keep` prompt tokens (after the BOS token, which always stays; < 0: the whole prompt),
  /// drop the oldest half of the rest, and recompute the KV cache over what is left. The
  /// model then no longer sees the dropped text; the output (and the grammar) still does.
  bool context_shift = false;
  int32_t keep = 0;
  /// Classifier-free guidance (sampler/guidance.h) when cfg_scale != 1 or a negative prompt
  /// is given: a second KV cache runs `negative_prompt` (empty: the BOS token alone) and the
  /// same generated tokens, and z ← z_uncond + cfg_scale·(z − z_uncond) before the chain.
  float cfg_scale = 1.0f;
  std::string negative_prompt;
  /// Contrastive decoding against this weaker model (same vocabulary): an amateur KV cache
  /// runs the same prompt and tokens, and the chain scores log p_expert − log p_amateur over
  /// the tokens within contrast_alpha of the expert's best (sampler/guidance.h).
  std::shared_ptr<const LlamaModel> contrast_model;
  float contrast_alpha = 0.1f;
  /// Record each generated token's log-probabilities with this many alternatives
  /// (GenerateResult::logprobs; --logprobs N); < 0: off.
  int32_t logprobs = -1;
};

struct GenerateResult {
  std::string text;             ///< the completion (the prompt is not repeated)
  std::vector<int32_t> tokens;  ///< generated ids, including a final end-of-generation id
  StopReason stop = StopReason::kMaxTokens;
  /// The output is complete: the grammar accepts it (always, without a grammar).
  bool complete = true;
  int32_t budget = 0;           ///< tokens the run could take (max_tokens, the context)
  int32_t forced_tokens = 0;    ///< of `tokens`, appended by jump-forward (no model choice)
  int32_t healed_tokens = 0;    ///< prompt tokens token healing removed (their bytes re-spelled)
  int32_t context_shifts = 0;   ///< times the context was shifted (GenerateOptions::context_shift)
  int32_t prompt_tokens = 0;
  double prompt_seconds = 0;    ///< forward pass over the prompt
  double generate_seconds = 0;  ///< everything after the prompt (forward, mask, sampling)
  double sampling_seconds = 0;  ///< sampling chain alone, grammar mask included
  /// Speculative decoding (runtime/speculative.h): draft tokens proposed and accepted, and
  /// forward passes of the target after the prompt (one per round).
  int32_t draft_tokens = 0;
  int32_t accepted_draft_tokens = 0;
  int32_t target_passes = 0;
  /// One per generated token when GenerateOptions::logprobs >= 0 (forced tokens marked).
  std::vector<StepLogprobs> logprobs;
};

/// The token budget cannot hold the shortest output the grammar accepts (checked before
/// anything is generated). what() states the minimum.
class BudgetError : public Error {
 public:
  BudgetError(const std::string& message, size_t minimum) : Error(message), minimum_(minimum) {}
  /// Tokens the run needs at least (an end-of-generation token included).
  size_t minimum() const { return minimum_; }

 private:
  size_t minimum_;
};

class EarleyMatcher;

/// The prompt's tokens (BOS first when the tokenizer adds one). Throws std::invalid_argument
/// when the tokenizer's and the model's vocabulary sizes differ, or the prompt is empty and
/// the tokenizer adds no BOS token.
std::vector<int32_t> encode_prompt(const LoadedModel& model, const std::string& prompt);
/// Throws std::invalid_argument when a prompt of `prompt_tokens` leaves no room in a context
/// of `n_ctx` tokens.
void check_prompt_fits(size_t prompt_tokens, int32_t n_ctx);

/// The text of generated tokens, piece by piece: a token's bytes (none for a control token).
/// Without a grammar and after a BOS-only prompt end, the tokenizer's decoding convention
/// drops the space SentencePiece puts before the first word (llama2.c prints "Once", not
/// " Once"); under a grammar the output is the tokens' bytes exactly.
class OutputText {
 public:
  OutputText(const Tokenizer& tokenizer, bool constrained, const std::vector<int32_t>& prompt);
  /// The piece of the next generated token.
  std::string_view piece(int32_t id);

 private:
  const Tokenizer& tok_;
  bool strip_first_space_;
  size_t count_ = 0;
};

/// Tokens a run may take: max_tokens and the context, whichever ends first (the last token
/// chosen is never run through the model, so a context of n holds n − prompt + 1 generated
/// tokens); max_tokens alone with a context shift.
int32_t generation_budget(const GenerateOptions& options, size_t prompt_tokens, int32_t n_ctx);
/// The matcher of `options.grammar` (null without one) with length-aware closing's budget
/// set (unless off). Throws BudgetError when the budget cannot hold the shortest output
/// (with `healed` prompt bytes to re-spell first).
std::unique_ptr<EarleyMatcher> make_budgeted_matcher(const GenerateOptions& options, const Tokenizer& tokenizer,
                                                     int32_t budget, const std::string& healed = {});
/// `logits` when every one is finite; else throws std::runtime_error naming the model file
/// and the generation step.
std::span<const float> checked_logits(std::span<const float> logits, const LoadedModel& model, size_t step);

/// Generates a completion of `options.prompt`. Under a grammar the output is complete when
/// generation ends: length-aware closing (EarleyMatcher::set_max_tokens) keeps a complete
/// sentence within the budget — max_tokens and the context, whichever ends first — at
/// every step, and generation ends with an end-of-generation token where the grammar
/// accepts (or, for a vocabulary without one, at the budget with an accepted text). The
/// completion's bytes are exactly the bytes of the generated tokens (after the healed
/// prompt bytes, with token healing). Without a grammar, the tokenizer's decoding
/// convention applies (the space SentencePiece puts before the first word after BOS is
/// dropped). `on_text` receives each piece as soon as it is chosen or forced.
/// When no token has a finite probability, generation stops there (StopReason::kNoTokenAllowed,
/// `complete` false) instead of emitting one.
/// Throws std::invalid_argument when the prompt does not fit in the context (or `keep` leaves
/// no room to shift it), BudgetError
/// when the budget is below what the grammar needs, std::runtime_error when the model computes
/// a NaN or infinite logit (weights holding NaN / Inf), naming the step.
GenerateResult generate(const LoadedModel& model, const GenerateOptions& options,
                        const std::function<void(std::string_view)>& on_text = {});

}  // namespace lockstep
