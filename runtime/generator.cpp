// runtime/generator.cpp — see generator.h.
#include "runtime/generator.h"

#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

#include "automata/matcher.h"

namespace lockstep {

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::kEndOfGeneration: return "end of generation";
    case StopReason::kMaxTokens: return "max tokens";
    case StopReason::kContextFull: return "context full";
    case StopReason::kGrammarDeadEnd: return "grammar dead end";
  }
  return "?";
}

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
}  // namespace

GenerateResult generate(const LoadedModel& loaded, const GenerateOptions& options,
                        const std::function<void(std::string_view)>& on_text) {
  const Tokenizer& tok = *loaded.tokenizer;
  const LlamaConfig& cfg = loaded.model->config();
  if (tok.size() != static_cast<size_t>(cfg.vocab_size)) {
    throw std::invalid_argument(fmt::format("the tokenizer has {} tokens but the model {}",
                                            tok.size(), cfg.vocab_size));
  }
  GenerateResult result;
  std::vector<int32_t> prompt = tok.encode(options.prompt, tok.adds_bos());
  if (prompt.empty()) {
    throw std::invalid_argument("the prompt is empty and this tokenizer starts sequences without "
                                "a BOS token: give a prompt");
  }
  InferenceState state(loaded.model, options.context_length);
  const int32_t n_ctx = state.context_length();
  if (prompt.size() >= static_cast<size_t>(n_ctx)) {
    throw std::invalid_argument(fmt::format("the prompt is {} tokens; the context holds {}",
                                            prompt.size(), n_ctx));
  }
  result.prompt_tokens = static_cast<int32_t>(prompt.size());

  std::unique_ptr<GrammarMatcher> matcher;
  if (options.grammar) {
    // The per-state masks fill in on a second thread while the model runs; the decode loop
    // computes any state it reaches first.
    auto cache = std::make_shared<TokenMaskCache>(options.grammar, tok.shared_vocabulary());
    cache->start_background_precompute();
    matcher = std::make_unique<GrammarMatcher>(cache);
  }
  SamplerChain chain = make_sampler_chain(options.sampling, matcher.get());

  auto t0 = Clock::now();
  std::span<const float> logits;
  for (size_t i = 0; i < prompt.size(); ++i) {
    logits = state.forward(prompt[i], static_cast<int32_t>(i));
    chain.accept_context(prompt[i]);
  }
  result.prompt_seconds = seconds_since(t0);

  t0 = Clock::now();
  int32_t pos = static_cast<int32_t>(prompt.size());
  int32_t prev = prompt.back();
  const bool strip_first_space = !matcher && tok.strips_space_after_bos();
  for (;;) {
    if (options.max_tokens >= 0 && static_cast<int32_t>(result.tokens.size()) >= options.max_tokens) {
      result.stop = StopReason::kMaxTokens;
      break;
    }
    const auto ts = Clock::now();
    const int32_t id = chain.sample(logits);
    if (id < 0) {
      result.sampling_seconds += seconds_since(ts);
      result.stop = StopReason::kGrammarDeadEnd;
      break;
    }
    chain.accept(id);
    result.sampling_seconds += seconds_since(ts);
    result.tokens.push_back(id);
    if (tok.vocabulary().is_eog(id)) {
      result.stop = StopReason::kEndOfGeneration;
      break;
    }
    std::string_view piece = tok.vocabulary().is_control(id) ? std::string_view() : tok.token_bytes(id);
    if (strip_first_space && prev == tok.bos_id() && !piece.empty() && piece[0] == ' ') {
      piece.remove_prefix(1);
    }
    result.text += piece;
    if (on_text && !piece.empty()) on_text(piece);
    if (pos >= n_ctx) {
      result.stop = StopReason::kContextFull;
      break;
    }
    logits = state.forward(id, pos);
    ++pos;
    prev = id;
  }
  result.generate_seconds = seconds_since(t0);
  return result;
}

}  // namespace lockstep
