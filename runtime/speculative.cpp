// runtime/speculative.cpp — see speculative.h.
#include "runtime/speculative.h"

#include <chrono>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "automata/matcher.h"
#include "sampler/speculative.h"

namespace lockstep {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void check_options(const LoadedModel& target, const GenerateOptions& o, const SpeculativeOptions& s) {
  const auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (o.token_healing) bad("speculative decoding does not heal tokens: drop token healing or the draft");
  if (o.context_shift) bad("speculative decoding does not shift the context: drop the context shift or the draft");
  if (o.logprobs >= 0) bad("speculative decoding does not report log-probabilities: drop them or the draft");
  if (o.cfg_scale != 1.0f || !o.negative_prompt.empty() || o.contrast_model) {
    bad("speculative decoding does not combine with guidance (a second context per draft): drop one of them");
  }
  if (o.sampling.mirostat != 0 && o.sampling.temperature > 0) {
    bad("mirostat's draw depends on its own state, so a draft cannot be verified against it: drop one of them");
  }
  if (s.draft_tokens < 1) bad(fmt::format("a draft proposes at least 1 token per round (got {})", s.draft_tokens));
  const LlamaConfig& c = target.model->config();
  switch (s.kind) {
    case DraftKind::kModel:
      if (!s.draft_model) bad("no draft model");
      if (s.draft_model->config().vocab_size != c.vocab_size) {
        bad(fmt::format("the draft model has {} tokens in its vocabulary and the target {}: a draft must share the "
                        "target's vocabulary",
                        s.draft_model->config().vocab_size, c.vocab_size));
      }
      break;
    case DraftKind::kLayers:
      if (s.draft_layers < 1 || s.draft_layers > c.n_layers) {
        bad(fmt::format("--draft-layers {} is outside [1, {}] (the target's layers)", s.draft_layers, c.n_layers));
      }
      break;
    case DraftKind::kLookup:
      if (s.ngram < 1) bad(fmt::format("--lookup-ngram {} is below 1", s.ngram));
      break;
  }
}

}  // namespace

GenerateResult generate_speculative(const LoadedModel& loaded, const GenerateOptions& o, const SpeculativeOptions& s,
                                    const std::function<void(std::string_view)>& on_text) {
  check_options(loaded, o, s);
  const Tokenizer& tok = *loaded.tokenizer;
  const Vocabulary& vocab = tok.vocabulary();
  GenerateResult result;
  std::vector<int32_t> seq = encode_prompt(loaded, o.prompt);  // prompt + output: the context
  InferenceState target(loaded.model, o.context_length, o.threads);
  const int32_t n_ctx = target.context_length();
  check_prompt_fits(seq.size(), n_ctx);
  std::unique_ptr<InferenceState> draft;
  if (s.kind == DraftKind::kModel) draft = std::make_unique<InferenceState>(s.draft_model, n_ctx, o.threads);
  if (s.kind == DraftKind::kLayers) {
    draft = std::make_unique<InferenceState>(loaded.model, n_ctx, o.threads);
    draft->set_layer_limit(s.draft_layers);
  }
  if (draft && draft->context_length() < n_ctx) {
    throw std::invalid_argument(fmt::format("the draft model's context ({} tokens) is shorter than the target's ({})",
                                            draft->context_length(), n_ctx));
  }
  const size_t prompt_tokens = seq.size();
  result.prompt_tokens = static_cast<int32_t>(prompt_tokens);
  const int32_t budget = generation_budget(o, prompt_tokens, n_ctx);
  result.budget = budget;
  std::unique_ptr<EarleyMatcher> matcher = make_budgeted_matcher(o, tok, budget);
  std::unique_ptr<EarleyMatcher> draft_matcher;
  if (matcher) draft_matcher = std::make_unique<EarleyMatcher>(matcher->fork());
  SamplerChain chain = make_sampler_chain(o.sampling, matcher.get(), &vocab);
  SamplerChain draft_chain = make_sampler_chain(o.sampling, draft_matcher.get(), &vocab);
  for (const int32_t id : seq) {
    chain.accept_context(id);
    draft_chain.accept_context(id);
  }
  std::mt19937_64 rng(o.sampling.seed);
  const auto uniform = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };

  // Every prompt token but the last goes in now; the last is the first round's input.
  auto t0 = Clock::now();
  size_t target_valid = 0, draft_valid = 0;  // KV-cache positions that hold `seq`
  if (prompt_tokens > 1) {
    const std::span<const int32_t> head(seq.data(), prompt_tokens - 1);
    target.forward(head, 0);
    if (draft) draft->forward(head, 0);
    target_valid = draft_valid = prompt_tokens - 1;
  }
  result.prompt_seconds = seconds_since(t0);
  t0 = Clock::now();

  OutputText output(tok, matcher != nullptr, seq);
  bool ended = false;
  // Appends a chosen token to the output; true when it ends generation.
  const auto emit = [&](int32_t id) {
    result.tokens.push_back(id);
    seq.push_back(id);
    if (vocab.is_eog(id)) {
      result.stop = StopReason::kEndOfGeneration;
      return true;
    }
    const std::string_view piece = output.piece(id);
    result.text += piece;
    if (on_text && !piece.empty()) on_text(piece);
    return false;
  };

  std::vector<int32_t> proposal;
  std::vector<Candidates> q;
  Candidates p;
  while (!ended) {
    if (result.tokens.size() >= static_cast<size_t>(budget)) {
      result.stop = o.max_tokens >= 0 && budget == o.max_tokens ? StopReason::kMaxTokens : StopReason::kContextFull;
      break;
    }
    // Draft: up to K tokens, leaving room in the budget for the target's own token.
    const size_t k = std::min(static_cast<size_t>(s.draft_tokens), static_cast<size_t>(budget) - result.tokens.size() - 1);
    proposal.clear();
    q.clear();
    if (k > 0 && s.kind == DraftKind::kLookup) {
      proposal = lookup_ngram_draft(seq, static_cast<size_t>(s.ngram), k);
      for (const int32_t id : proposal) q.push_back(point_mass(id));
    } else if (k > 0) {
      std::span<const float> logits = draft->forward(std::span<const int32_t>(seq).subspan(draft_valid), static_cast<int32_t>(draft_valid));
      draft_valid = seq.size();
      for (size_t i = 0; i < k; ++i) {
        Candidates& qi = q.emplace_back();
        qi.assign(logits);
        draft_chain.distribution(qi);
        const int32_t x = draw_from(qi, uniform());
        if (x < 0) {
          q.pop_back();
          break;
        }
        proposal.push_back(x);
        draft_chain.accept(x);
        if (vocab.is_eog(x) || i + 1 == k) break;
        logits = draft->forward(x, static_cast<int32_t>(draft_valid++));
      }
    }
    result.draft_tokens += static_cast<int32_t>(proposal.size());

    // Verify: the tokens the target has not run, then the proposals, in one pass.
    std::vector<int32_t> input(seq.begin() + static_cast<std::ptrdiff_t>(target_valid), seq.end());
    const size_t base = input.size() - 1;  // the row that predicts the first proposal
    input.insert(input.end(), proposal.begin(), proposal.end());
    const std::span<const float> rows = target.forward_all(input, static_cast<int32_t>(target_valid));
    ++result.target_passes;
    const size_t n_vocab = vocab.size();
    const auto row = [&](size_t r) {
      return checked_logits(rows.subspan((base + r) * n_vocab, n_vocab), loaded, result.tokens.size());
    };
    const size_t before = seq.size();
    size_t accepted = 0;
    int32_t next = -1;
    bool nothing_allowed = false;
    for (size_t j = 0; j < proposal.size() && !ended; ++j) {
      p.assign(row(j));
      chain.distribution(p);
      if (p.data.empty()) {
        nothing_allowed = true;
        break;
      }
      if (speculative_accept(p, q[j], proposal[j], uniform())) {
        chain.accept(proposal[j]);
        ++accepted;
        ended = emit(proposal[j]);
      } else {
        next = speculative_residual(p, q[j], uniform());
        break;
      }
    }
    if (!ended && !nothing_allowed && next < 0) {  // every proposal accepted: one more from p
      p.assign(row(proposal.size()));
      chain.distribution(p);
      next = draw_from(p, uniform());
      nothing_allowed = next < 0;
    }
    if (!ended && next >= 0) {
      chain.accept(next);
      ended = emit(next);
    }
    result.accepted_draft_tokens += static_cast<int32_t>(accepted);
    // The target's cache holds the accepted proposals; the draft's what it ran of them.
    target_valid = before + accepted;
    draft_valid = std::min(draft_valid, before + accepted);
    if (s.kind != DraftKind::kLookup) {
      draft_chain.rollback(proposal.size() - accepted);
      if (next >= 0) draft_chain.accept(next);
    }
    if (nothing_allowed) {
      result.stop = StopReason::kNoTokenAllowed;
      break;
    }
  }
  result.complete = result.stop != StopReason::kNoTokenAllowed && (!matcher || matcher->is_accepting());
  result.generate_seconds = seconds_since(t0);
  return result;
}

}  // namespace lockstep
