// api/matcher.cpp — GrammarMatcher (include/lockstep/matcher.h) over the automata layer's
// EarleyMatcher.
#include "lockstep/matcher.h"

#include <stdexcept>

#include <fmt/format.h>

#include "automata/matcher.h"

namespace lockstep {

GrammarMatcher::GrammarMatcher(const CompiledGrammar& grammar, size_t max_tokens)
    : grammar_(grammar), engine_(std::make_unique<EarleyMatcher>(grammar.mask_cache())) {
  if (max_tokens != SIZE_MAX) engine_->set_max_tokens(max_tokens);
}

GrammarMatcher::GrammarMatcher(CompiledGrammar grammar, std::unique_ptr<EarleyMatcher> engine)
    : grammar_(std::move(grammar)), engine_(std::move(engine)) {}

GrammarMatcher::~GrammarMatcher() = default;
GrammarMatcher::GrammarMatcher(GrammarMatcher&&) noexcept = default;
GrammarMatcher& GrammarMatcher::operator=(GrammarMatcher&&) noexcept = default;

bool GrammarMatcher::accept_token(int32_t id) { return engine_->accept_token(id); }
bool GrammarMatcher::accept_string(std::string_view bytes) { return engine_->accept_bytes(bytes); }

size_t GrammarMatcher::validate_tokens(std::span<const int32_t> ids) {
  const size_t vocab = grammar_.tokenizer_info().vocab_size();
  size_t accepted = 0;
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= vocab) {
      engine_->rollback(accepted);
      throw std::out_of_range(fmt::format("token id {} is outside the vocabulary (size {})", id, vocab));
    }
    if (!engine_->accept_token(id)) break;
    ++accepted;
  }
  engine_->rollback(accepted);
  return accepted;
}

void GrammarMatcher::fill_next_token_bitmask(TokenBitmask bitmask) {
  const size_t vocab = grammar_.tokenizer_info().vocab_size();
  if (bitmask.vocab_size != vocab) {
    throw std::invalid_argument(fmt::format("the token bitmask is over {} tokens, the grammar's vocabulary has {}",
                                            bitmask.vocab_size, vocab));
  }
  engine_->fill_next_token_bitmask(bitmask.words);
}

void GrammarMatcher::rollback(size_t n) { engine_->rollback(n); }
size_t GrammarMatcher::num_steps() const { return engine_->num_steps(); }
void GrammarMatcher::reset() { engine_->reset(); }

GrammarMatcher GrammarMatcher::fork() const {
  return GrammarMatcher(grammar_, std::make_unique<EarleyMatcher>(engine_->fork()));
}

bool GrammarMatcher::is_accepting() const { return engine_->is_accepting(); }
bool GrammarMatcher::is_terminated() const { return engine_->is_terminated(); }
std::string GrammarMatcher::find_jump_forward_string(size_t max_bytes) { return engine_->jump_forward_bytes(max_bytes); }
void GrammarMatcher::set_max_tokens(size_t max_tokens) { engine_->set_max_tokens(max_tokens); }
size_t GrammarMatcher::min_tokens_to_accept() { return engine_->min_tokens_to_accept(); }
const CompiledGrammar& GrammarMatcher::compiled_grammar() const { return grammar_; }
EarleyMatcher& GrammarMatcher::engine() { return *engine_; }

void fill_next_token_bitmasks(std::span<GrammarMatcher* const> matchers, std::span<uint32_t> words, size_t stride,
                              unsigned threads) {
  std::vector<EarleyMatcher*> engines;
  engines.reserve(matchers.size());
  for (GrammarMatcher* m : matchers) {
    if (m != nullptr && m->compiled_grammar().tokenizer_info().bitmask_words() > stride) {
      throw std::invalid_argument(fmt::format("fill_next_token_bitmasks: stride {} is less than a matcher's {} words",
                                              stride, m->compiled_grammar().tokenizer_info().bitmask_words()));
    }
    engines.push_back(m != nullptr ? &m->engine() : nullptr);
  }
  fill_next_token_bitmasks(std::span<EarleyMatcher* const>(engines), words, stride, threads);
}

}  // namespace lockstep
