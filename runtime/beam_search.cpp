// runtime/beam_search.cpp — see beam_search.h.
#include "runtime/beam_search.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "automata/matcher.h"

namespace lockstep {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Beam {
  std::vector<int32_t> tokens;
  double sum = 0;
  std::unique_ptr<EarleyMatcher> matcher;
  size_t state;                // index into the states
  std::vector<float> logits;   // of the next position
};

}  // namespace

BeamSearchResult beam_search(const LoadedModel& loaded, const BeamSearchOptions& o) {
  const Tokenizer& tok = *loaded.tokenizer;
  const Vocabulary& vocab = tok.vocabulary();
  if (o.beam.beams < 1) throw std::invalid_argument(fmt::format("beams must be >= 1 (got {})", o.beam.beams));
  if (o.num_return_sequences < 1 || o.num_return_sequences > o.beam.beams) {
    throw std::invalid_argument(fmt::format("the number of returned sequences must be in [1, beams = {}] (got {})",
                                            o.beam.beams, o.num_return_sequences));
  }
  if (!std::isfinite(o.beam.length_penalty)) throw std::invalid_argument("the length penalty must be finite");
  const size_t B = static_cast<size_t>(o.beam.beams);
  BeamSearchResult result;
  const std::vector<int32_t> prompt = encode_prompt(loaded, o.prompt);
  std::vector<std::unique_ptr<InferenceState>> states;
  states.push_back(std::make_unique<InferenceState>(loaded.model, o.context_length, o.threads));
  const int32_t n_ctx = states[0]->context_length();
  check_prompt_fits(prompt.size(), n_ctx);
  result.prompt_tokens = static_cast<int32_t>(prompt.size());
  const int32_t context = n_ctx - static_cast<int32_t>(prompt.size()) + 1;
  const int32_t budget = o.max_tokens >= 0 ? std::min(o.max_tokens, context) : context;
  result.budget = budget;
  const StopReason at_budget =
      o.max_tokens >= 0 && budget == o.max_tokens ? StopReason::kMaxTokens : StopReason::kContextFull;

  Beam first;
  first.state = 0;
  if (o.grammar) {
    auto cache = std::make_shared<TokenMaskCache>(o.grammar, tok.shared_vocabulary());
    first.matcher = std::make_unique<EarleyMatcher>(cache);
    if (o.length_aware_closing) {
      const size_t need = first.matcher->min_tokens_to_accept();
      if (need == SIZE_MAX) throw BudgetError("this vocabulary cannot spell the grammar's shortest output", SIZE_MAX);
      const size_t total = need + first.matcher->eog_tokens();
      if (total > static_cast<size_t>(std::max(budget, 0))) {
        throw BudgetError(fmt::format("the grammar's shortest output needs {} tokens, but the budget is {}: raise "
                                      "--max-tokens to {} or more",
                                      total, budget, total),
                          total);
      }
      first.matcher->set_max_tokens(static_cast<size_t>(budget));
    }
  }
  auto t0 = Clock::now();
  const auto logits0 = states[0]->forward(prompt, 0);
  first.logits.assign(logits0.begin(), logits0.end());
  ++result.forward_passes;
  result.prompt_seconds = seconds_since(t0);
  t0 = Clock::now();

  FinishedHypotheses finished(o.beam);
  std::vector<Beam> beams;
  beams.push_back(std::move(first));
  const auto is_eog = [&](int32_t id) { return vocab.is_eog(id); };
  for (size_t length = 0; !beams.empty(); ) {
    ++result.steps;
    std::vector<double> sums;
    std::vector<std::vector<TokenLogprob>> candidates;
    for (auto& b : beams) {
      sums.push_back(b.sum);
      candidates.push_back(beam_candidates(b.logits, o.logit_bias, b.matcher.get(), 2 * B));
    }
    const std::vector<BeamChoice> choices = select_beams(sums, candidates, B, is_eog);
    ++length;
    // The continuing choices become the new beams; the first child of a beam keeps its
    // KV cache, the others copy it into a cache no child kept.
    std::vector<Beam> next;
    std::vector<bool> kept(states.size(), false);
    std::vector<size_t> parent_of;
    for (const BeamChoice& c : choices) {
      const Beam& parent = beams[c.beam];
      std::vector<int32_t> tokens = parent.tokens;
      tokens.push_back(c.token);
      if (c.finishes) {
        const bool complete = !parent.matcher || parent.matcher->is_accepting();
        finished.add(std::move(tokens), c.sum_logprob, length - 1, complete);
        continue;
      }
      Beam child;
      child.tokens = std::move(tokens);
      child.sum = c.sum_logprob;
      if (parent.matcher) {
        child.matcher = std::make_unique<EarleyMatcher>(parent.matcher->fork());
        if (!child.matcher->accept_token(c.token)) {
          throw std::logic_error(fmt::format("beam search: token {} is not allowed after its mask", c.token));
        }
      }
      child.state = SIZE_MAX;
      if (!kept[parent.state]) {
        kept[parent.state] = true;
        child.state = parent.state;
      }
      parent_of.push_back(c.beam);
      next.push_back(std::move(child));
    }
    if (next.empty()) break;
    const int32_t pos = result.prompt_tokens + static_cast<int32_t>(length) - 1;  // of the new token
    for (size_t i = 0; i < next.size(); ++i) {
      if (next[i].state != SIZE_MAX) continue;
      size_t free = 0;
      while (free < states.size() && kept[free]) ++free;
      if (free == states.size()) {
        states.push_back(std::make_unique<InferenceState>(loaded.model, o.context_length, o.threads));
        kept.push_back(false);
      }
      kept[free] = true;
      states[free]->copy_cache_from(*states[beams[parent_of[i]].state], pos);
      ++result.kv_cache_copies;
      next[i].state = free;
    }
    beams = std::move(next);
    double best = -std::numeric_limits<double>::infinity();
    for (const auto& b : beams) best = std::max(best, b.sum);
    if (finished.done(best, length, static_cast<size_t>(budget))) break;
    if (length >= static_cast<size_t>(budget)) {
      for (auto& b : beams) {
        finished.add(b.tokens, b.sum, length, !b.matcher || b.matcher->is_accepting());
      }
      break;
    }
    for (auto& b : beams) {
      const auto l = states[b.state]->forward(b.tokens.back(), pos);
      b.logits.assign(l.begin(), l.end());
      ++result.forward_passes;
    }
  }
  // Every beam ran out of allowed tokens before any finished: the best running ones, incomplete.
  if (finished.size() == 0) {
    for (auto& b : beams) finished.add(b.tokens, b.sum, b.tokens.size(), false);
  }
  result.generate_seconds = seconds_since(t0);
  for (const auto& s : states) result.kv_cache_bytes += s->kv_cache_bytes();

  for (auto& h : finished.sorted()) {
    if (result.sequences.size() == static_cast<size_t>(o.num_return_sequences)) break;
    BeamSequence s;
    OutputText output(tok, o.grammar != nullptr, prompt);
    for (const int32_t id : h.tokens) s.text += output.piece(id);
    s.stop = !h.tokens.empty() && vocab.is_eog(h.tokens.back()) ? StopReason::kEndOfGeneration
             : h.tokens.size() >= static_cast<size_t>(budget)       ? at_budget
                                                                      : StopReason::kNoTokenAllowed;
    s.tokens = std::move(h.tokens);
    s.sum_logprob = h.sum_logprob;
    s.score = h.score;
    s.complete = h.complete;
    result.sequences.push_back(std::move(s));
  }
  return result;
}

}  // namespace lockstep
