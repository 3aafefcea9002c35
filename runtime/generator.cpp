// runtime/generator.cpp — see generator.h.
#include "runtime/generator.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "automata/matcher.h"
#include "runtime/jump_forward.h"
#include "sampler/guidance.h"

namespace lockstep {

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::kEndOfGeneration: return "end of generation";
    case StopReason::kMaxTokens: return "max tokens";
    case StopReason::kContextFull: return "context full";
    case StopReason::kNoTokenAllowed: return "no token allowed";
  }
  return "?";
}

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

namespace {

// Token healing backs the prompt up by at most this many tokens.
constexpr int32_t kMaxHealedTokens = 4;

// Tokens the run may take: max_tokens and the context (the last token chosen is never
// run through the model, so a context of n holds n - prompt + 1 generated tokens).
int32_t token_budget(const GenerateOptions& o, size_t prompt, int32_t n_ctx) {
  if (o.context_shift) return o.max_tokens >= 0 ? o.max_tokens : INT32_MAX;
  const int32_t context = n_ctx - static_cast<int32_t>(prompt) + 1;
  return o.max_tokens >= 0 ? std::min(o.max_tokens, context) : context;
}

std::string budget_message(const GenerateOptions& o, int32_t budget, size_t need, size_t text, size_t healing,
                           std::string shortest) {
  const std::string which = o.max_tokens >= 0 && budget == o.max_tokens
                                ? fmt::format("--max-tokens is {}", budget)
                                : fmt::format("the context leaves room for {} after the prompt", budget);
  if (shortest.size() > 60) shortest = shortest.substr(0, 57) + "...";
  return fmt::format("the grammar's shortest output ({}) needs {} tokens ({} of text{}{}), but {}: raise it to {} or more",
                     nlohmann::json(shortest).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), need, text,
                     need > text + healing ? " and an end-of-generation token" : "",
                     healing ? fmt::format(", {} to re-spell the healed prompt", healing) : std::string(), which, need);
}

// The logits of a forward pass are finite: weights holding NaN or Inf would otherwise
// generate garbage silently. `step` counts the generated tokens before this pass.
std::span<const float> checked(std::span<const float> logits, const LoadedModel& m, size_t step) {
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!std::isfinite(logits[i])) {
      throw std::runtime_error(fmt::format(
          "{}: the model computed a{} logit for token {} at generation step {} ({}): its weights hold NaN or "
          "infinite values", m.model_path, std::isnan(logits[i]) ? " NaN" : "n infinite", i, step,
          step == 0 ? "the prompt" : fmt::format("after {} generated tokens", step)));
    }
  }
  return logits;
}

// What the decode loop shares with its jump-forward step.
struct DecodeState {
  const Tokenizer& tok;
  EarleyMatcher* matcher;
  SamplerChain& chain;
  GenerateResult& result;
  int32_t budget;
  bool closing;
  const std::function<void(std::string_view)>& on_text;
  bool logprobs;                 // record GenerateResult::logprobs
  std::vector<int32_t> pending;  // chosen or forced, not yet run through the model
  size_t healing_tokens = 0;     // the first generated tokens, which re-spelled healed prompt bytes

  void emit(std::string_view piece) {
    result.text += piece;
    if (on_text && !piece.empty()) on_text(piece);
  }
};

// Appends what the grammar forces after the last token, without a model choice, as the
// tokenizer would write it (runtime/jump_forward.h) — merged with the last chosen token
// when the tokenizer would merge them — unless that would leave too little budget to close.
void jump_forward(DecodeState& d) {
  std::vector<int32_t>& tokens = d.result.tokens;
  const bool may_merge = !d.pending.empty() && tokens.size() > d.healing_tokens;
  const ForcedTokens f = forced_tokens(d.tok, *d.matcher, may_merge ? std::optional(tokens.back()) : std::nullopt);
  const size_t after = tokens.size() - f.rollback + f.tokens.size();
  if (f.tokens.empty() || after >= static_cast<size_t>(d.budget)) return;
  const int32_t replaced = f.rollback ? tokens.back() : -1;
  if (f.rollback) d.chain.rollback(1);
  for (const int32_t id : f.tokens) d.chain.accept(id);
  if (d.closing && d.matcher->eog_tokens() + d.matcher->min_tokens_to_accept() > static_cast<size_t>(d.budget) - after) {
    d.chain.rollback(f.tokens.size());  // the model writes them instead, within the budget
    if (f.rollback) d.chain.accept(replaced);
    return;
  }
  if (f.rollback) {
    tokens.pop_back();
    d.pending.pop_back();
    if (!d.result.logprobs.empty()) d.result.logprobs.pop_back();
  }
  if (d.logprobs) {
    for (const int32_t id : f.tokens) {
      StepLogprobs& step = d.result.logprobs.emplace_back();
      step.id = id;
      step.forced = true;
      step.logprob = step.masked_logprob = std::numeric_limits<double>::quiet_NaN();
    }
  }
  tokens.insert(tokens.end(), f.tokens.begin(), f.tokens.end());
  d.pending.insert(d.pending.end(), f.tokens.begin(), f.tokens.end());
  d.result.forced_tokens += static_cast<int32_t>(f.tokens.size());
  std::string text;
  for (const int32_t id : f.tokens) text += d.tok.token_bytes(id);
  d.emit(std::string_view(text).substr(text.size() - f.forced_bytes));
}

// Context shift (llama.cpp's): `seq` — the KV cache's tokens and those about to join it —
// keeps its first `keep` tokens and loses the oldest half of the rest, until it fits `n_ctx`.
void shift_context(std::vector<int32_t>& seq, size_t keep, int32_t n_ctx) {
  while (seq.size() > static_cast<size_t>(n_ctx)) {
    const size_t discard = (seq.size() - keep) / 2;
    seq.erase(seq.begin() + static_cast<std::ptrdiff_t>(keep),
              seq.begin() + static_cast<std::ptrdiff_t>(keep + std::max<size_t>(discard, 1)));
  }
}

// The second model passes of guidance: classifier-free guidance's unconditional context and
// contrastive decoding's amateur, each with a KV cache of its own that takes the same
// generated tokens as the main one.
struct Guidance {
  const LoadedModel& model;
  bool cfg;
  float scale;
  std::unique_ptr<InferenceState> uncond, amateur;
  std::vector<int32_t> negative;
  int32_t uncond_pos = 0, amateur_pos = 0;
  std::vector<float> uncond_logits, amateur_logits, guided;
  /// The longest context a generated token joins: the prompt's, or the negative prompt's.
  size_t context_tokens(size_t prompt) const { return std::max(prompt, negative.size()); }

  Guidance(const LoadedModel& m, const GenerateOptions& o, const std::vector<int32_t>& prompt, int32_t n_ctx)
      : model(m), cfg(o.cfg_scale != 1.0f || !o.negative_prompt.empty()), scale(o.cfg_scale) {
    if (!std::isfinite(o.cfg_scale)) throw std::invalid_argument("the guidance scale must be finite");
    if (cfg) {
      const Tokenizer& tok = *m.tokenizer;
      negative = tok.encode(o.negative_prompt, tok.adds_bos());
      if (negative.empty()) negative.push_back(prompt.back());  // no BOS: the prompt's last token stands alone
      if (negative.size() >= static_cast<size_t>(n_ctx)) {
        throw std::invalid_argument(
            fmt::format("the negative prompt is {} tokens; the context holds {}", negative.size(), n_ctx));
      }
      uncond = std::make_unique<InferenceState>(m.model, n_ctx, o.threads);
    }
    if (o.contrast_model) {
      if (o.contrast_model->config().vocab_size != m.model->config().vocab_size) {
        throw std::invalid_argument(fmt::format("the contrast model has {} tokens and the model {}: they must share "
                                                "the vocabulary",
                                                o.contrast_model->config().vocab_size, m.model->config().vocab_size));
      }
      amateur = std::make_unique<InferenceState>(o.contrast_model, n_ctx, o.threads);
      if (amateur->context_length() < n_ctx) {
        throw std::invalid_argument(fmt::format("the contrast model's context ({}) is shorter than the model's ({})",
                                                amateur->context_length(), n_ctx));
      }
    }
  }
  void start(const std::vector<int32_t>& prompt) {
    if (uncond) {
      const auto l = checked(uncond->forward(negative, 0), model, 0);
      uncond_logits.assign(l.begin(), l.end());
      uncond_pos = static_cast<int32_t>(negative.size());
    }
    if (amateur) {
      const auto l = amateur->forward(prompt, 0);
      amateur_logits.assign(l.begin(), l.end());
      amateur_pos = static_cast<int32_t>(prompt.size());
    }
  }
  void advance(std::span<const int32_t> tokens, size_t step) {
    if (uncond) {
      const auto l = checked(uncond->forward(tokens, uncond_pos), model, step);
      uncond_logits.assign(l.begin(), l.end());
      uncond_pos += static_cast<int32_t>(tokens.size());
    }
    if (amateur) {
      const auto l = amateur->forward(tokens, amateur_pos);
      amateur_logits.assign(l.begin(), l.end());
      amateur_pos += static_cast<int32_t>(tokens.size());
    }
  }
  std::span<const float> apply(std::span<const float> logits) {
    if (!cfg) return logits;
    guided.assign(logits.begin(), logits.end());
    classifier_free_guidance(guided, uncond_logits, scale);
    return guided;
  }
};

}  // namespace

std::vector<int32_t> encode_prompt(const LoadedModel& model, const std::string& text) {
  const Tokenizer& tok = *model.tokenizer;
  if (tok.size() != static_cast<size_t>(model.model->config().vocab_size)) {
    throw std::invalid_argument(
        fmt::format("the tokenizer has {} tokens but the model {}", tok.size(), model.model->config().vocab_size));
  }
  std::vector<int32_t> prompt = tok.encode(text, tok.adds_bos());
  if (prompt.empty()) {
    throw std::invalid_argument("the prompt is empty and this tokenizer starts sequences without a BOS token: give "
                                "a prompt");
  }
  return prompt;
}

void check_prompt_fits(size_t prompt_tokens, int32_t n_ctx) {
  if (prompt_tokens >= static_cast<size_t>(n_ctx)) {
    throw std::invalid_argument(fmt::format("the prompt is {} tokens; the context holds {}", prompt_tokens, n_ctx));
  }
}

OutputText::OutputText(const Tokenizer& tokenizer, bool constrained, const std::vector<int32_t>& prompt)
    : tok_(tokenizer),
      strip_first_space_(!constrained && tokenizer.strips_space_after_bos() && !prompt.empty() &&
                         prompt.back() == tokenizer.bos_id()) {}

std::string_view OutputText::piece(int32_t id) {
  const bool first = count_++ == 0;
  std::string_view piece = tok_.vocabulary().is_control(id) ? std::string_view() : tok_.token_bytes(id);
  if (first && strip_first_space_ && !piece.empty() && piece[0] == ' ') piece.remove_prefix(1);
  return piece;
}

int32_t generation_budget(const GenerateOptions& o, size_t prompt_tokens, int32_t n_ctx) {
  return token_budget(o, prompt_tokens, n_ctx);
}

std::unique_ptr<EarleyMatcher> make_budgeted_matcher(const GenerateOptions& options, const Tokenizer& tok,
                                                     int32_t budget, const std::string& healed) {
  if (!options.grammar) return nullptr;
  std::shared_ptr<TokenMaskCache> cache = options.mask_cache;
  if (cache && (&cache->grammar() != options.grammar.get() || cache->vocabulary().id() != tok.vocabulary().id())) {
    throw std::invalid_argument("the mask cache given was made for another grammar or vocabulary");
  }
  if (!cache) cache = std::make_shared<TokenMaskCache>(options.grammar, tok.shared_vocabulary());
  // The per-state masks fill in on a second thread while the model runs; the decode loop
  // computes any state it reaches first.
  cache->start_background_precompute();
  auto matcher = std::make_unique<EarleyMatcher>(cache);
  if (options.length_aware_closing) {
    const size_t text = matcher->min_tokens_to_accept();
    if (text == SIZE_MAX) {
      throw BudgetError("this vocabulary cannot spell the grammar's shortest output", SIZE_MAX);
    }
    // Healing may re-spell the removed bytes exactly before the grammar's first byte.
    const size_t heal = healed.empty() ? 0 : matcher->cache().closing().speller.min_tokens(healed);
    const size_t need = text + matcher->eog_tokens() + heal;
    if (need > static_cast<size_t>(std::max(budget, 0))) {
      throw BudgetError(budget_message(options, budget, need, text, heal, matcher->completion_text()), need);
    }
    matcher->set_max_tokens(static_cast<size_t>(budget));
  }
  return matcher;
}

std::span<const float> checked_logits(std::span<const float> logits, const LoadedModel& model, size_t step) {
  return checked(logits, model, step);
}

GenerateResult generate(const LoadedModel& loaded, const GenerateOptions& options,
                        const std::function<void(std::string_view)>& on_text) {
  const Tokenizer& tok = *loaded.tokenizer;
  const Vocabulary& vocab = tok.vocabulary();
  GenerateResult result;
  std::vector<int32_t> prompt = encode_prompt(loaded, options.prompt);
  // Token healing: the prompt's last text token goes, and the ones before it while some
  // longer token starts with the bytes removed (" t" "i" → " ti", which " time" starts);
  // those bytes come back as generation.
  std::string healed;
  while (options.token_healing && prompt.size() >= 2 && !vocab.is_control(prompt.back()) &&
         result.healed_tokens < kMaxHealedTokens) {
    const std::string wider = std::string(tok.token_bytes(prompt.back())) + healed;
    if (result.healed_tokens > 0 && !vocab.extends(wider)) break;
    healed = wider;
    prompt.pop_back();
    ++result.healed_tokens;
  }
  InferenceState state(loaded.model, options.context_length, options.threads);
  const int32_t n_ctx = state.context_length();
  check_prompt_fits(prompt.size(), n_ctx);
  result.prompt_tokens = static_cast<int32_t>(prompt.size());
  const bool has_bos = tok.adds_bos() && prompt.front() == tok.bos_id();
  const size_t keep = options.keep < 0 ? prompt.size()
                                       : std::min(prompt.size(), static_cast<size_t>(options.keep) + (has_bos ? 1 : 0));
  if (options.context_shift && keep >= static_cast<size_t>(n_ctx) / 2) {
    throw std::invalid_argument(fmt::format("context shift would keep {} tokens of a {}-token context: it keeps fewer "
                                            "than half (--keep at most {}) so that a shift frees room",
                                            keep, n_ctx, n_ctx / 2 - 1 - (has_bos ? 1 : 0)));
  }
  if (options.context_shift && (options.cfg_scale != 1.0f || !options.negative_prompt.empty() || options.contrast_model)) {
    throw std::invalid_argument("the context shift does not shift guidance's second context: drop one of them");
  }
  Guidance guidance(loaded, options, prompt, n_ctx);
  const int32_t budget = token_budget(options, guidance.context_tokens(prompt.size()), n_ctx);
  result.budget = budget;

  std::unique_ptr<EarleyMatcher> matcher = make_budgeted_matcher(options, tok, budget, healed);
  SamplerChain chain = make_sampler_chain(options.sampling, matcher.get(), &vocab, healed);
  if (options.contrast_model) chain.insert_at_sampling_stage(make_contrastive_decoding(&guidance.amateur_logits, options.contrast_alpha));

  auto t0 = Clock::now();
  std::span<const float> logits = checked(state.forward(prompt, 0), loaded, 0);
  guidance.start(prompt);
  for (const int32_t id : prompt) chain.accept_context(id);
  result.prompt_seconds = seconds_since(t0);

  t0 = Clock::now();
  DecodeState d{tok,    matcher.get(), chain, result, budget, options.length_aware_closing, on_text,
                options.logprobs >= 0, {},         0};
  Candidates masked;  // what the sampling stage received, for the log-probabilities
  if (d.logprobs) chain.set_observer([&masked](const Candidates& c) { masked = c; });
  int32_t pos = static_cast<int32_t>(prompt.size());  // next KV-cache position
  std::vector<int32_t> in_cache = prompt;  // the KV cache's tokens, kept for a context shift
  std::string heal_left = healed;  // healed bytes the output has not re-spelled yet
  OutputText output(tok, matcher || !healed.empty(), prompt);
  for (;;) {
    if (options.jump_forward && matcher && heal_left.empty() && !matcher->is_terminated()) jump_forward(d);
    if (result.tokens.size() >= static_cast<size_t>(budget)) {
      result.stop = options.max_tokens >= 0 && budget == options.max_tokens ? StopReason::kMaxTokens
                                                                              : StopReason::kContextFull;
      break;
    }
    if (!d.pending.empty()) {
      if (options.context_shift && pos + d.pending.size() > static_cast<size_t>(n_ctx)) {
        in_cache.insert(in_cache.end(), d.pending.begin(), d.pending.end());
        shift_context(in_cache, keep, n_ctx);
        logits = checked(state.forward(in_cache, 0), loaded, result.tokens.size());
        pos = static_cast<int32_t>(in_cache.size());
        ++result.context_shifts;
      } else {
        logits = checked(state.forward(d.pending, pos), loaded, result.tokens.size());
        pos += static_cast<int32_t>(d.pending.size());
        guidance.advance(d.pending, result.tokens.size());
        if (options.context_shift) in_cache.insert(in_cache.end(), d.pending.begin(), d.pending.end());
      }
      d.pending.clear();
    }
    const auto ts = Clock::now();
    const int32_t id = chain.sample(guidance.apply(logits));
    if (id < 0) {  // nothing has a finite probability: stop rather than emit a token
      result.sampling_seconds += seconds_since(ts);
      result.stop = StopReason::kNoTokenAllowed;
      break;
    }
    chain.accept(id);
    result.sampling_seconds += seconds_since(ts);
    if (d.logprobs) {
      fill_step_logprobs(result.logprobs.emplace_back(), id, logits, masked, static_cast<size_t>(options.logprobs));
    }
    result.tokens.push_back(id);
    if (vocab.is_eog(id)) {
      result.stop = StopReason::kEndOfGeneration;
      break;
    }
    std::string_view piece = output.piece(id);
    if (!heal_left.empty()) {
      const size_t n = std::min(piece.size(), heal_left.size());
      heal_left.erase(0, n);
      piece.remove_prefix(n);
      d.healing_tokens = result.tokens.size();
    }
    d.emit(piece);
    d.pending.push_back(id);
  }
  result.complete = result.stop != StopReason::kNoTokenAllowed && (!matcher || matcher->is_accepting());
  result.generate_seconds = seconds_since(t0);
  return result;
}

}  // namespace lockstep
