// runtime/contrastive_search.cpp — see contrastive_search.h.
#include "runtime/contrastive_search.h"

#include <chrono>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "automata/matcher.h"
#include "sampler/guidance.h"

namespace lockstep {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

GenerateResult contrastive_search(const LoadedModel& loaded, const GenerateOptions& o, float alpha,
                                  const std::function<void(std::string_view)>& on_text) {
  if (!(alpha >= 0 && alpha <= 1)) throw std::invalid_argument(fmt::format("the penalty alpha {} is outside [0, 1]", alpha));
  if (o.sampling.top_k < 1) throw std::invalid_argument("contrastive search needs top-k >= 1 candidates");
  if (o.token_healing || o.context_shift || o.cfg_scale != 1.0f || !o.negative_prompt.empty() || o.contrast_model ||
      o.logprobs >= 0) {
    throw std::invalid_argument("contrastive search does not combine with token healing, the context shift, guidance "
                                "or log-probabilities: drop one of them");
  }
  const Tokenizer& tok = *loaded.tokenizer;
  const Vocabulary& vocab = tok.vocabulary();
  const int32_t n_vocab = loaded.model->config().vocab_size;
  GenerateResult result;
  const std::vector<int32_t> prompt = encode_prompt(loaded, o.prompt);
  InferenceState state(loaded.model, o.context_length, o.threads);
  const int32_t n_ctx = state.context_length();
  check_prompt_fits(prompt.size(), n_ctx);
  result.prompt_tokens = static_cast<int32_t>(prompt.size());
  const int32_t budget = generation_budget(o, prompt.size(), n_ctx);
  result.budget = budget;
  std::unique_ptr<EarleyMatcher> matcher = make_budgeted_matcher(o, tok, budget);
  SamplerChain chain = make_sampler_chain(o.sampling, matcher.get(), &vocab);
  for (const int32_t id : prompt) chain.accept_context(id);

  auto t0 = Clock::now();
  const auto first = checked_logits(state.forward_all(prompt, 0), loaded, 0);
  std::vector<float> logits(first.end() - n_vocab, first.end());
  std::vector<float> context(state.hidden().begin(), state.hidden().end());  // (positions, dim)
  result.prompt_seconds = seconds_since(t0);
  t0 = Clock::now();
  OutputText output(tok, matcher != nullptr, prompt);
  int32_t pos = static_cast<int32_t>(prompt.size());
  std::vector<std::vector<float>> cand_logits, cand_hidden;
  for (;;) {
    if (result.tokens.size() >= static_cast<size_t>(budget)) {
      result.stop = o.max_tokens >= 0 && budget == o.max_tokens ? StopReason::kMaxTokens : StopReason::kContextFull;
      break;
    }
    Candidates c;
    c.assign(logits);
    chain.shape(c);
    c.softmax();
    std::erase_if(c.data, [](const TokenCandidate& t) { return !(t.p > 0); });
    if (c.data.empty()) {
      result.stop = StopReason::kNoTokenAllowed;
      break;
    }
    c.data.resize(std::min(c.data.size(), static_cast<size_t>(o.sampling.top_k)));
    size_t best = 0;
    double best_score = -std::numeric_limits<double>::infinity();
    cand_logits.resize(c.data.size());
    cand_hidden.resize(c.data.size());
    for (size_t i = 0; i < c.data.size(); ++i) {
      const auto l = checked_logits(state.forward(c.data[i].id, pos), loaded, result.tokens.size());
      cand_logits[i].assign(l.begin(), l.end());
      cand_hidden[i].assign(state.hidden().begin(), state.hidden().end());
      const double score = alpha == 0 ? c.data[i].p : contrastive_search_score(c.data[i].p, cand_hidden[i], context, alpha);
      if (score > best_score) {
        best_score = score;
        best = i;
      }
    }
    const int32_t id = c.data[best].id;
    if (best + 1 != c.data.size()) state.forward(id, pos);  // the cache at `pos` holds the last candidate's
    ++pos;
    chain.accept(id);
    result.tokens.push_back(id);
    if (vocab.is_eog(id)) {
      result.stop = StopReason::kEndOfGeneration;
      break;
    }
    const std::string_view piece = output.piece(id);
    result.text += piece;
    if (on_text && !piece.empty()) on_text(piece);
    logits.swap(cand_logits[best]);
    context.insert(context.end(), cand_hidden[best].begin(), cand_hidden[best].end());
  }
  result.complete = result.stop != StopReason::kNoTokenAllowed && (!matcher || matcher->is_accepting());
  result.generate_seconds = seconds_since(t0);
  return result;
}

}  // namespace lockstep
