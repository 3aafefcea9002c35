// automata/token_bitmask.h — bit operations on token bitmasks.
//
// A token bitmask over a vocabulary of n tokens is uint32_t[ceil(n / 32)] (bitmask_words(n));
// bit (id % 32) of words[id / 32] set = token id allowed. Bits past the vocabulary (in the
// last word) are kept clear. The free functions work on any span of words; TokenBitmask is
// a non-owning view that also knows the vocabulary size. Thread-safety: none (a view of the
// caller's words).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace lockstep {

/// Words of a bitmask over `n` tokens: ceil(n / 32).
constexpr size_t bitmask_words(size_t n) { return (n + 31) / 32; }

/// The bits of the last word of an `n`-token bitmask that stand for tokens (all 32 when n
/// is a multiple of 32).
constexpr uint32_t last_word_bits(size_t n) { return n % 32 == 0 ? 0xFFFFFFFFu : (1u << (n % 32)) - 1; }

inline void set_bit(std::span<uint32_t> words, size_t id) { words[id >> 5] |= 1u << (id & 31); }
inline void clear_bit(std::span<uint32_t> words, size_t id) { words[id >> 5] &= ~(1u << (id & 31)); }
inline bool test_bit(std::span<const uint32_t> words, size_t id) { return (words[id >> 5] >> (id & 31)) & 1u; }

/// Set bits of one word. Without a library call: baseline x86-64 has no popcnt
/// instruction, and __builtin_popcount then calls into libgcc.
constexpr unsigned popcount32(uint32_t word) {
  word = word - ((word >> 1) & 0x55555555u);
  word = (word & 0x33333333u) + ((word >> 2) & 0x33333333u);
  return (((word + (word >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

/// Set bits of all words.
inline size_t count_bits(std::span<const uint32_t> words) {
  size_t n = 0;
  for (const uint32_t w : words) n += popcount32(w);
  return n;
}

/// Clears every bit at or past `vocab_size` (the tail of the last word and any words after).
inline void clear_past(std::span<uint32_t> words, size_t vocab_size) {
  const size_t used = std::min(words.size(), bitmask_words(vocab_size));
  if (used == bitmask_words(vocab_size) && used > 0) words[used - 1] &= last_word_bits(vocab_size);
  std::fill(words.begin() + static_cast<std::ptrdiff_t>(used), words.end(), 0u);
}

/// Calls f(id) for every set bit, in increasing id order.
template <class F>
inline void for_each_set_bit(std::span<const uint32_t> words, F&& f) {
  for (size_t w = 0; w < words.size(); ++w) {
    for (uint32_t bits = words[w]; bits != 0; bits &= bits - 1) f(w * 32 + static_cast<size_t>(__builtin_ctz(bits)));
  }
}

/// A non-owning view of a token bitmask: `words` (at least bitmask_words(vocab_size) of
/// them) and the vocabulary size. Bit (id % 32) of words[id / 32] set = token id allowed.
/// Thread-safety: none; a view of the caller's words.
struct TokenBitmask {
  std::span<uint32_t> words;
  size_t vocab_size = 0;

  void set(size_t id) const { set_bit(words, id); }
  void clear(size_t id) const { clear_bit(words, id); }
  /// Whether token `id` is allowed; false for ids at or past vocab_size.
  bool test(size_t id) const { return id < vocab_size && test_bit(words, id); }
  size_t count() const { return count_bits(words); }
  void clear_all() const { std::fill(words.begin(), words.end(), 0u); }
  void clear_past() const { lockstep::clear_past(words, vocab_size); }
  template <class F>
  void for_each(F&& f) const {
    for_each_set_bit(words, std::forward<F>(f));
  }
};

}  // namespace lockstep
