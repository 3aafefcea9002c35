// sampler/grammar_mask.cpp — the grammar mask in the sampling chain, and token healing
// (see make_grammar_mask in sampler.h).
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "automata/matcher.h"
#include "automata/token_bitmask.h"
#include "sampler/sampler.h"

namespace lockstep {

namespace {

class GrammarMask : public LogitsProcessor {
 public:
  GrammarMask(EarleyMatcher* m, const Vocabulary* vocab, std::string healed)
      : matcher_(m), vocab_(vocab ? vocab : m ? &m->vocabulary() : nullptr), pending_(std::move(healed)) {
    if (!vocab_) throw std::invalid_argument("make_grammar_mask: token healing needs the vocabulary");
  }
  const char* name() const override { return "grammar"; }

  void apply(Candidates& c) override {
    if (!pending_.empty()) {
      std::erase_if(c.data, [&](const TokenCandidate& t) { return !heals(t.id); });
      return;
    }
    if (!matcher_) return;
    mask_.resize(matcher_->vocabulary().bitmask_words());
    matcher_->fill_next_token_bitmask(mask_);
    const TokenBitmask allowed{mask_, matcher_->vocabulary().size()};
    // An id outside the vocabulary (a negative one included) is not allowed.
    std::erase_if(c.data, [&](const TokenCandidate& t) { return !allowed.test(static_cast<size_t>(t.id)); });
  }

  void accept(int32_t token) override {
    if (!pending_.empty()) {
      if (!heals(token)) throw std::runtime_error(fmt::format("token {} does not continue the healed prompt", token));
      const std::string_view bytes = vocab_->token_bytes(token);
      Healing step{pending_, false};
      if (bytes.size() < pending_.size()) {
        pending_.erase(0, bytes.size());
        // A token that only re-spells the prompt takes budget without moving the grammar.
        if (matcher_ && matcher_->max_tokens() != SIZE_MAX) matcher_->set_max_tokens(matcher_->max_tokens() - 1);
      } else {
        const std::string_view rest = bytes.substr(pending_.size());
        pending_.clear();
        if (matcher_ && !rest.empty()) {
          matcher_->accept_bytes(rest);
          step.moved_grammar = true;
        } else if (matcher_ && matcher_->max_tokens() != SIZE_MAX) {
          matcher_->set_max_tokens(matcher_->max_tokens() - 1);
        }
      }
      healing_.push_back(std::move(step));
      ++steps_;
      return;
    }
    ++steps_;
    if (matcher_ && !matcher_->accept_token(token)) {
      throw std::runtime_error(fmt::format("token {} is not allowed by the grammar", token));
    }
  }

  void rollback(size_t n) override {
    if (n > steps_) throw std::out_of_range("grammar mask: rollback past the start");
    for (size_t i = 0; i < n; ++i, --steps_) {
      if (steps_ > healing_.size()) {
        if (matcher_) matcher_->rollback(1);
        continue;
      }
      Healing& h = healing_.back();
      if (h.moved_grammar) {
        matcher_->rollback(1);
      } else if (matcher_ && matcher_->max_tokens() != SIZE_MAX) {
        matcher_->set_max_tokens(matcher_->max_tokens() + 1);
      }
      pending_ = std::move(h.pending_before);
      healing_.pop_back();
    }
  }

  void reset() override {
    rollback(steps_);
    if (matcher_) matcher_->reset();
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<GrammarMask>(*this); }

 private:
  // While healing: does `id` re-spell (a prefix of) the pending bytes, and whatever follows
  // them start a grammatical output that still fits the budget?
  bool heals(int32_t id) {
    if (id < 0 || static_cast<size_t>(id) >= vocab_->size() || vocab_->is_control(id)) return false;
    const std::string_view bytes = vocab_->token_bytes(id);
    if (bytes.empty()) return false;
    const size_t limit = matcher_ ? matcher_->max_tokens() : SIZE_MAX;
    // Budget: the grammar's output, end of generation and `respell` more healing tokens must
    // fit in what is left after this token (the matcher's steps are the grammar's tokens;
    // healing-only tokens lower its budget instead).
    auto fits = [&](size_t respell) {
      if (limit == SIZE_MAX) return true;
      const size_t left = limit > matcher_->num_steps() ? limit - matcher_->num_steps() : 0;
      const size_t need = matcher_->min_tokens_to_accept() + matcher_->eog_tokens() + respell;
      return need != SIZE_MAX && need + 1 <= left;
    };
    if (bytes.size() < pending_.size()) {
      if (pending_.compare(0, bytes.size(), bytes) != 0) return false;
      const std::string_view rest = std::string_view(pending_).substr(bytes.size());
      return limit == SIZE_MAX || fits(matcher_->cache().closing().speller.min_tokens(rest));
    }
    if (bytes.compare(0, pending_.size(), pending_) != 0) return false;
    if (!matcher_) return true;
    const std::string_view rest = bytes.substr(pending_.size());
    if (rest.empty()) return fits(0);  // the grammar has not started: its whole output must still fit
    if (!matcher_->accept_bytes(rest)) return false;
    // After `rest`, the matcher counts this token as one of its steps already.
    const size_t left = limit == SIZE_MAX ? SIZE_MAX : limit > matcher_->num_steps() ? limit - matcher_->num_steps() : 0;
    const bool ok = limit == SIZE_MAX || matcher_->min_tokens_to_accept() + matcher_->eog_tokens() <= left;
    matcher_->rollback(1);
    return ok;
  }

  struct Healing {
    std::string pending_before;
    bool moved_grammar;
  };
  EarleyMatcher* matcher_;
  const Vocabulary* vocab_;
  std::string pending_;            // healed prompt bytes the next tokens must spell first
  std::vector<Healing> healing_;   // the first steps, taken while healing
  size_t steps_ = 0;               // accepted tokens
  std::vector<uint32_t> mask_;
};

}  // namespace

std::unique_ptr<LogitsProcessor> make_grammar_mask(EarleyMatcher* matcher, const Vocabulary* vocab,
                                                   std::string healed_prefix) {
  return std::make_unique<GrammarMask>(matcher, vocab, std::move(healed_prefix));
}

}  // namespace lockstep
