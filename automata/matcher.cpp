// automata/matcher.cpp — see matcher.h.
#include "automata/matcher.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace lockstep {

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar,
                               std::shared_ptr<const Vocabulary> vocabulary, ParserLimits limits)
    : grammar_(std::move(grammar)),
      vocabulary_(std::move(vocabulary)),
      parser_(*grammar_, limits) {}

bool GrammarMatcher::accept_token(int32_t id) {
  if (id < 0 || static_cast<size_t>(id) >= vocabulary_->size()) {
    throw std::out_of_range(fmt::format("token id {} is outside the vocabulary (size {})", id,
                                        vocabulary_->size()));
  }
  if (terminated_) return false;
  if (vocabulary_->is_eog(id)) {
    if (!parser_.accepting()) return false;
    terminated_ = true;
    history_.push_back(kEogStep);
    return true;
  }
  if (vocabulary_->is_control(id)) return false;
  return accept_bytes(vocabulary_->token_bytes(id));
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  if (terminated_) return false;
  if (!parser_.advance(bytes)) return false;
  history_.push_back(static_cast<uint32_t>(bytes.size()));
  return true;
}

void GrammarMatcher::rollback(size_t n_steps) {
  if (n_steps > history_.size()) {
    throw std::out_of_range(fmt::format("cannot roll back {} steps: only {} were accepted",
                                        n_steps, history_.size()));
  }
  size_t bytes = 0;
  for (size_t i = 0; i < n_steps; ++i) {
    const uint32_t step = history_.back();
    history_.pop_back();
    if (step == kEogStep) {
      terminated_ = false;
    } else {
      bytes += step;
    }
  }
  parser_.rollback(bytes);
}

void GrammarMatcher::reset() {
  parser_.reset();
  history_.clear();
  terminated_ = false;
}

void GrammarMatcher::fill_next_token_bitmask(std::span<uint32_t> words) {
  const Vocabulary& vocab = *vocabulary_;
  if (words.size() < vocab.bitmask_words()) {
    throw std::invalid_argument(fmt::format("bitmask has {} words, the vocabulary needs {}",
                                            words.size(), vocab.bitmask_words()));
  }
  std::fill(words.begin(), words.end(), 0u);
  if (terminated_) return;
  auto set = [&](int32_t id) { words[id >> 5] |= 1u << (id & 31); };
  if (parser_.accepting()) {
    for (int32_t id : vocab.eog_ids()) set(id);
  }
  if (!parser_.can_advance()) return;

  // Walk the sorted vocabulary as a trie: consecutive tokens share a prefix, which stays
  // in the parser; a rejected prefix rejects every following token that starts with it.
  const auto sorted = vocab.sorted_text_tokens();
  const auto common = vocab.sorted_common_prefix();
  size_t consumed = 0;  // bytes of the current path held in the parser
  size_t dead = 0;      // length of a rejected prefix of the current path, or 0
  try {
    for (size_t i = 0; i < sorted.size(); ++i) {
      const int32_t id = sorted[i];
      const std::string_view bytes = vocab.token_bytes(id);
      const size_t lcp = common[i];
      if (dead != 0 && lcp >= dead) continue;
      dead = 0;
      const size_t keep = std::min(consumed, lcp);
      parser_.rollback(consumed - keep);
      consumed = keep;
      while (consumed < bytes.size() && parser_.advance(static_cast<uint8_t>(bytes[consumed]))) {
        ++consumed;
      }
      if (consumed == bytes.size()) {
        set(id);
      } else {
        dead = consumed + 1;
      }
    }
  } catch (...) {
    parser_.rollback(consumed);
    throw;
  }
  parser_.rollback(consumed);
}

}  // namespace lockstep
