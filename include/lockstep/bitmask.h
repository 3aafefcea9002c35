// include/lockstep/bitmask.h — the token bitmask: the contract between a grammar matcher
// and a sampler.
//
// A token bitmask over a vocabulary of n tokens is uint32_t[ceil(n / 32)] (XGrammar's and
// vLLM's layout, where the same words are read as int32): bit (id % 32) of word id / 32 is
// set iff token id is allowed. Bits past n are always clear. A batch of B masks is
// uint32_t[B × ceil(n / 32)], row-major. TokenBitmask is a non-owning view of one row;
// nothing here allocates or locks (thread-safety: that of the words viewed).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

namespace lockstep {

/// Words of a token bitmask over `vocab_size` tokens: ceil(vocab_size / 32).
constexpr size_t bitmask_words(size_t vocab_size) { return (vocab_size + 31) / 32; }

inline void set_bit(std::span<uint32_t> words, size_t id) { words[id >> 5] |= uint32_t{1} << (id & 31); }
inline void clear_bit(std::span<uint32_t> words, size_t id) { words[id >> 5] &= ~(uint32_t{1} << (id & 31)); }
inline bool test_bit(std::span<const uint32_t> words, size_t id) { return (words[id >> 5] >> (id & 31)) & 1; }

/// Set bits among the first `vocab_size` tokens (bits past it are not counted).
inline size_t count_bits(std::span<const uint32_t> words, size_t vocab_size) {
  size_t n = 0;
  const size_t full = vocab_size / 32;
  for (size_t w = 0; w < full; ++w) n += static_cast<size_t>(std::popcount(words[w]));
  if (vocab_size % 32 != 0) {
    n += static_cast<size_t>(std::popcount(words[full] & ((uint32_t{1} << (vocab_size % 32)) - 1)));
  }
  return n;
}

/// Clears every bit at or past `vocab_size` (through the end of `words`).
inline void clear_past(std::span<uint32_t> words, size_t vocab_size) {
  size_t w = vocab_size / 32;
  if (w >= words.size()) return;
  if (vocab_size % 32 != 0) words[w++] &= (uint32_t{1} << (vocab_size % 32)) - 1;
  for (; w < words.size(); ++w) words[w] = 0;
}

/// Calls f(id) for every set bit, in increasing id order.
template <class F>
void for_each_set_bit(std::span<const uint32_t> words, F&& f) {
  for (size_t w = 0; w < words.size(); ++w) {
    for (uint32_t bits = words[w]; bits != 0; bits &= bits - 1) {
      f(static_cast<int32_t>(w * 32 + static_cast<size_t>(std::countr_zero(bits))));
    }
  }
}

/// A view of one token bitmask: `words` (uint32_t[>= bitmask_words(vocab_size)]) over a
/// vocabulary of `vocab_size` tokens.
struct TokenBitmask {
  std::span<uint32_t> words;
  size_t vocab_size = 0;

  TokenBitmask() = default;
  /// Throws std::invalid_argument when `words` is shorter than bitmask_words(vocab_size).
  TokenBitmask(std::span<uint32_t> w, size_t n) : words(w), vocab_size(n) {
    if (w.size() < bitmask_words(n)) throw std::invalid_argument("token bitmask: too few words for the vocabulary");
  }

  bool allowed(int32_t id) const { return id >= 0 && static_cast<size_t>(id) < vocab_size && test_bit(words, static_cast<size_t>(id)); }
  void allow(int32_t id) { set_bit(words, static_cast<size_t>(id)); }
  void forbid(int32_t id) { clear_bit(words, static_cast<size_t>(id)); }
  /// Allowed tokens.
  size_t count() const { return count_bits(words, vocab_size); }
  void allow_all() {
    for (uint32_t& w : words) w = ~uint32_t{0};
    clear_past(words, vocab_size);
  }
  void forbid_all() {
    for (uint32_t& w : words) w = 0;
  }
  template <class F>
  void for_each_allowed(F&& f) const {
    for_each_set_bit(std::span<const uint32_t>(words.data(), bitmask_words(vocab_size)), f);
  }
};

}  // namespace lockstep
