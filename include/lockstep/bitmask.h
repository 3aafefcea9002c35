// include/lockstep/bitmask.h — the token bitmask: the contract between a grammar matcher
// and a sampler.
//
// A token bitmask over a vocabulary of n tokens is uint32_t[ceil(n / 32)] (XGrammar's and
// vLLM's layout, where the same words are read as int32): bit (id % 32) of word id / 32 is
// set iff token id is allowed. Bits past n are kept clear. A batch of B masks is
// uint32_t[B × ceil(n / 32)], row-major. The free functions work on any span of words;
// TokenBitmask is a non-owning view of one row that also knows the vocabulary size. Nothing
// here allocates or locks (thread-safety: that of the words viewed).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>

namespace lockstep {

/// Words of a token bitmask over `vocab_size` tokens: ceil(vocab_size / 32).
constexpr size_t bitmask_words(size_t vocab_size) { return (vocab_size + 31) / 32; }

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

/// Set bits of all words. Two words at a time, and a pair of empty words costs one test: the
/// masks of narrow grammar states (a key's next letters) are mostly empty.
inline size_t count_bits(std::span<const uint32_t> words) {
  size_t n = 0, i = 0;
  for (; i + 1 < words.size(); i += 2) {
    uint64_t x = uint64_t{words[i + 1]} << 32 | words[i];
    if (x == 0) continue;
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    n += static_cast<size_t>((x * 0x0101010101010101ull) >> 56);
  }
  if (i < words.size()) n += popcount32(words[i]);
  return n;
}

/// Set bits among the first `vocab_size` tokens (bits past it are not counted).
inline size_t count_bits(std::span<const uint32_t> words, size_t vocab_size) {
  const size_t full = std::min(words.size(), vocab_size / 32);
  size_t n = count_bits(words.first(full));
  if (vocab_size % 32 != 0 && full < words.size()) n += popcount32(words[full] & last_word_bits(vocab_size));
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
  auto each_of_word = [&](size_t w) {
    for (uint32_t bits = words[w]; bits != 0; bits &= bits - 1) f(w * 32 + static_cast<size_t>(__builtin_ctz(bits)));
  };
  size_t w = 0;
  for (; w + 1 < words.size(); w += 2) {
    if ((words[w] | words[w + 1]) == 0) continue;  // sparse masks: one test per empty pair
    each_of_word(w);
    each_of_word(w + 1);
  }
  if (w < words.size()) each_of_word(w);
}

/// A non-owning view of one token bitmask: `words` (at least bitmask_words(vocab_size) of
/// them) over a vocabulary of `vocab_size` tokens.
struct TokenBitmask {
  std::span<uint32_t> words;
  size_t vocab_size = 0;

  TokenBitmask() = default;
  /// Throws std::invalid_argument when `w` is shorter than bitmask_words(n).
  TokenBitmask(std::span<uint32_t> w, size_t n) : words(w), vocab_size(n) {
    if (w.size() < bitmask_words(n)) throw std::invalid_argument("token bitmask: too few words for the vocabulary");
  }

  void set(size_t id) const { set_bit(words, id); }
  void clear(size_t id) const { clear_bit(words, id); }
  /// Whether token `id` is allowed; false for ids at or past vocab_size.
  bool test(size_t id) const { return id < vocab_size && test_bit(words, id); }
  /// Allowed tokens (bits past vocab_size are not counted).
  size_t count() const { return count_bits(words, vocab_size); }
  void clear_all() const { std::fill(words.begin(), words.end(), 0u); }
  /// Every token allowed (bits past vocab_size stay clear).
  void set_all() const {
    std::fill(words.begin(), words.end(), ~0u);
    clear_past();
  }
  void clear_past() const { lockstep::clear_past(words, vocab_size); }
  /// f(id) for each allowed token, in increasing id order.
  template <class F>
  void for_each(F&& f) const {
    for_each_set_bit(words.first(std::min(words.size(), bitmask_words(vocab_size))), std::forward<F>(f));
  }
};

}  // namespace lockstep
