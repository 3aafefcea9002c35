// api/tokenizer_info.cpp — TokenizerInfo (include/lockstep/tokenizer.h) over the runtime's
// tokenizers and the automata layer's Vocabulary.
#include "lockstep/tokenizer.h"

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "automata/vocabulary.h"
#include "grammar/limits.h"
#include "runtime/json_warm_start.h"
#include "runtime/tokenizer.h"

namespace lockstep {

struct TokenizerInfo::Impl {
  std::shared_ptr<const Tokenizer> tokenizer;  // null for from_tokens()
  std::shared_ptr<const Vocabulary> vocabulary;
  size_t tokenizer_size = 0;
  std::string fingerprint;
};

namespace {

std::string fingerprint_of(const Vocabulary& v) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  const uint64_t size = v.size();
  mix(&size, sizeof size);
  for (size_t id = 0; id < v.size(); ++id) {
    const std::string_view b = v.token_bytes(static_cast<int32_t>(id));
    const uint64_t n = b.size();
    const uint8_t control = v.is_control(static_cast<int32_t>(id)) ? 1 : 0;
    mix(&n, sizeof n);
    mix(b.data(), b.size());
    mix(&control, 1);
  }
  for (int32_t id : v.eog_ids()) mix(&id, sizeof id);
  return fmt::format("{:016x}", h);
}

void check_id(int32_t id, size_t size, const char* what) {
  if (id < 0 || static_cast<size_t>(id) >= size) {
    throw std::invalid_argument(fmt::format("{} {} is outside the vocabulary (ids 0 to {})", what, id, size - 1));
  }
}

// The vocabulary `base` padded to `vocab_size` with special tokens, with `stop` as its
// end-of-generation ids (or base's when none are given).
std::shared_ptr<const Vocabulary> rebuild(const Vocabulary& base, std::optional<size_t> vocab_size,
                                          const std::optional<std::vector<int32_t>>& stop) {
  const size_t n = vocab_size.value_or(base.size());
  if (n < base.size()) {
    throw std::invalid_argument(fmt::format("vocab_size {} is smaller than the tokenizer's {} tokens", n, base.size()));
  }
  if (n > engine_limits().vocab_size) {
    throw std::invalid_argument(fmt::format("vocab_size {} is more than the vocab_size limit {}", n,
                                            engine_limits().vocab_size));
  }
  std::vector<std::string> bytes(n);
  std::vector<TokenKind> kinds(n, TokenKind::kControl);
  for (size_t id = 0; id < base.size(); ++id) {
    bytes[id] = std::string(base.token_bytes(static_cast<int32_t>(id)));
    // A former stop token stays special when other ids replace it.
    kinds[id] = base.is_control(static_cast<int32_t>(id)) ? TokenKind::kControl : TokenKind::kText;
  }
  std::vector<int32_t> eog(base.eog_ids().begin(), base.eog_ids().end());
  if (stop) {
    eog = *stop;
    for (int32_t id : eog) check_id(id, n, "stop token id");
  }
  return std::make_shared<const Vocabulary>(std::move(bytes), std::move(kinds), std::move(eog));
}

TokenizerInfo make(std::shared_ptr<const Tokenizer> tokenizer, std::shared_ptr<const Vocabulary> vocab,
                   size_t tokenizer_size) {
  auto impl = std::make_shared<TokenizerInfo::Impl>();
  impl->tokenizer = std::move(tokenizer);
  impl->vocabulary = std::move(vocab);
  impl->tokenizer_size = tokenizer_size;
  impl->fingerprint = fingerprint_of(*impl->vocabulary);
  return TokenizerInfo(std::move(impl));
}

TokenizerInfo from_tokenizer(std::unique_ptr<Tokenizer> tok, std::optional<size_t> vocab_size,
                             const std::optional<std::vector<int32_t>>& stop) {
  std::shared_ptr<const Tokenizer> shared(std::move(tok));
  const size_t size = shared->size();
  std::shared_ptr<const Vocabulary> vocab =
      !vocab_size && !stop ? shared->shared_vocabulary() : rebuild(shared->vocabulary(), vocab_size, stop);
  return make(std::move(shared), std::move(vocab), size);
}

}  // namespace

TokenizerInfo::TokenizerInfo(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {
  prepare_json_building_blocks(impl_->vocabulary);
}

TokenizerInfo TokenizerInfo::from_file(const std::string& path, std::optional<size_t> vocab_size,
                                       std::optional<std::vector<int32_t>> stop_token_ids) {
  return from_tokenizer(load_tokenizer(path), vocab_size, stop_token_ids);
}

TokenizerInfo TokenizerInfo::from_tokenizer_json(std::string_view json_text, std::optional<size_t> vocab_size,
                                                 std::optional<std::vector<int32_t>> stop_token_ids,
                                                 const std::string& name) {
  return from_tokenizer(load_hf_tokenizer_text(json_text, name), vocab_size, stop_token_ids);
}

TokenizerInfo TokenizerInfo::from_tokens(std::vector<std::string> token_bytes, std::vector<int32_t> stop_token_ids,
                                         std::vector<int32_t> special_token_ids, std::optional<size_t> vocab_size) {
  const size_t size = token_bytes.size();
  const size_t n = vocab_size.value_or(size);
  if (n < size) {
    throw std::invalid_argument(fmt::format("vocab_size {} is smaller than the {} tokens given", n, size));
  }
  if (n == 0) throw std::invalid_argument("an empty vocabulary");
  if (n > engine_limits().vocab_size) {
    throw std::invalid_argument(fmt::format("vocab_size {} is more than the vocab_size limit {}", n,
                                            engine_limits().vocab_size));
  }
  std::vector<TokenKind> kinds(n, TokenKind::kText);
  for (size_t id = size; id < n; ++id) kinds[id] = TokenKind::kControl;
  token_bytes.resize(n);
  for (int32_t id : special_token_ids) {
    check_id(id, n, "special token id");
    kinds[static_cast<size_t>(id)] = TokenKind::kControl;
  }
  for (int32_t id : stop_token_ids) check_id(id, n, "stop token id");
  auto vocab = std::make_shared<const Vocabulary>(std::move(token_bytes), std::move(kinds), std::move(stop_token_ids));
  return make(nullptr, std::move(vocab), size);
}

size_t TokenizerInfo::vocab_size() const { return impl_->vocabulary->size(); }
size_t TokenizerInfo::tokenizer_size() const { return impl_->tokenizer_size; }
size_t TokenizerInfo::bitmask_words() const { return impl_->vocabulary->bitmask_words(); }

std::vector<int32_t> TokenizerInfo::stop_token_ids() const {
  const auto ids = impl_->vocabulary->eog_ids();
  return {ids.begin(), ids.end()};
}

bool TokenizerInfo::is_special(int32_t id) const {
  check_id(id, vocab_size(), "token id");
  return impl_->vocabulary->is_control(id);
}

std::string_view TokenizerInfo::token_bytes(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= vocab_size()) {
    throw std::out_of_range(fmt::format("token id {} is outside the vocabulary (size {})", id, vocab_size()));
  }
  if (impl_->vocabulary->is_control(id)) return {};  // special tokens add no output bytes
  return impl_->vocabulary->token_bytes(id);
}

bool TokenizerInfo::can_encode() const { return impl_->tokenizer != nullptr; }

std::vector<int32_t> TokenizerInfo::encode(std::string_view text, bool add_bos) const {
  if (!impl_->tokenizer) throw std::logic_error("this TokenizerInfo was made from a token list and cannot encode text");
  return impl_->tokenizer->encode(text, add_bos);
}

std::vector<int32_t> TokenizerInfo::encode_continuation(std::string_view text) const {
  if (!impl_->tokenizer) throw std::logic_error("this TokenizerInfo was made from a token list and cannot encode text");
  return impl_->tokenizer->encode_continuation(text);
}

std::string TokenizerInfo::decode(std::span<const int32_t> ids) const {
  if (impl_->tokenizer) {
    std::vector<int32_t> kept;  // padding ids decode to nothing
    kept.reserve(ids.size());
    for (int32_t id : ids) {
      check_id(id, vocab_size(), "token id");
      if (static_cast<size_t>(id) < impl_->tokenizer_size) kept.push_back(id);
    }
    return impl_->tokenizer->decode(kept);
  }
  std::string out;
  for (int32_t id : ids) {
    check_id(id, vocab_size(), "token id");
    out += impl_->vocabulary->token_bytes(id);
  }
  return out;
}

const std::string& TokenizerInfo::fingerprint() const { return impl_->fingerprint; }
const std::shared_ptr<const Vocabulary>& TokenizerInfo::vocabulary() const { return impl_->vocabulary; }

}  // namespace lockstep
