// grammar/intern_table.h — numbers distinct keys in the order they are met.
//
// Product and subset constructions (CharDfa products, number automata, the shared subtries
// of an enum's digit trie) meet each new key once and look it up again for every edge that
// reaches it. A node-based std::unordered_map allocates a node per key, chases a pointer per
// lookup and frees every node at the end. This table keeps the keys in a vector, in the
// order first met (their numbers), and finds them through open addressing with linear
// probing over a power-of-two array of those numbers, at most half full. Not thread-safe
// (one construction owns it).
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "grammar/hash.h"

namespace lockstep {

/// Hashes whose high bits depend on every bit of the key (MurmurHash3's finalizer), as the
/// tables below take the slot from the top bits: a 64-bit key, and a sequence of words
/// (FNV-1a seeded with its length, then finalized).
struct Mixed64Hash {
  uint64_t operator()(uint64_t k) const { return fmix64(k); }
};
struct MixedSeqHash {
  uint64_t operator()(std::span<const uint32_t> v) const { return fmix64(fnv1a_u32(v, kFnvOffsetBasis ^ v.size())); }
};

namespace intern_detail {
// The numbers of a table's keys by their 64-bit hashes: open addressing with linear probing
// over a power-of-two array (the slot from the hash's top bits), at most half full.
class Slots {
 public:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  explicit Slots(size_t expected) {
    unsigned bits = 4;
    while ((size_t{1} << bits) < 2 * expected) ++bits;
    rehash(bits);
  }
  /// The number of the key with hash `h` that `same(number)` accepts, else kEmpty with
  /// `slot` where a new key goes (add()).
  template <typename Same>
  uint32_t find(uint64_t h, Same&& same, size_t& slot) const {
    for (size_t i = h >> (64 - bits_);; i = (i + 1) & (slots_.size() - 1)) {
      const uint32_t k = slots_[i];
      if (k == kEmpty) {
        slot = i;
        return kEmpty;
      }
      if (hashes_[k] == h && same(k)) return k;
    }
  }
  /// Numbers a new key (size() before the call) at `slot` from find().
  uint32_t add(size_t slot, uint64_t h) {
    if (hashes_.size() >= kEmpty) throw std::length_error("InternTable: 2^32 - 1 keys");
    const auto id = static_cast<uint32_t>(hashes_.size());
    hashes_.push_back(h);
    slots_[slot] = id;
    if (2 * hashes_.size() > slots_.size()) rehash(bits_ + 1);
    return id;
  }
  size_t size() const { return hashes_.size(); }

 private:
  void rehash(unsigned bits) {
    bits_ = bits;
    slots_.assign(size_t{1} << bits, kEmpty);
    const size_t mask = slots_.size() - 1;
    for (uint32_t k = 0; k < hashes_.size(); ++k) {
      size_t i = hashes_[k] >> (64 - bits_);
      while (slots_[i] != kEmpty) i = (i + 1) & mask;
      slots_[i] = k;
    }
  }

  std::vector<uint64_t> hashes_;  // per key, for rehashing and a cheap first comparison
  std::vector<uint32_t> slots_;   // key numbers, or kEmpty
  unsigned bits_ = 0;
};
}  // namespace intern_detail

/// `Hash` maps a Key to 64 bits whose high bits depend on every bit of the key (the slot is
/// taken from the top bits, as Fibonacci hashing does).
template <typename Key, typename Hash>
class InternTable {
 public:
  explicit InternTable(size_t expected = 16) : slots_(expected) {}

  /// The number of `key`, and whether it was new (appended to keys(), numbered size() - 1).
  std::pair<uint32_t, bool> intern(const Key& key) {
    const uint64_t h = Hash{}(key);
    size_t slot = 0;
    const uint32_t k = slots_.find(h, [&](uint32_t x) { return keys_[x] == key; }, slot);
    if (k != intern_detail::Slots::kEmpty) return {k, false};
    const uint32_t id = slots_.add(slot, h);
    keys_.push_back(key);
    return {id, true};
  }

  /// The number of `key`, or kNotFound.
  static constexpr uint32_t kNotFound = intern_detail::Slots::kEmpty;
  uint32_t find(const Key& key) const {
    size_t slot = 0;
    return slots_.find(Hash{}(key), [&](uint32_t x) { return keys_[x] == key; }, slot);
  }
  const Key& key(uint32_t id) const { return keys_[id]; }
  size_t size() const { return keys_.size(); }

 private:
  std::vector<Key> keys_;
  intern_detail::Slots slots_;
};

/// An InternTable of sequences of 32-bit words, kept end to end in one array: a key costs no
/// allocation of its own (a std::vector key costs one; registering the 50,000 strings of an
/// enum meets hundreds of thousands of keys). `Hash` maps a std::span<const uint32_t> to 64
/// bits whose high bits depend on every bit of the key. Not thread-safe.
template <typename Hash = MixedSeqHash>
class SeqInternTable {
 public:
  explicit SeqInternTable(size_t expected = 16) : slots_(expected) {}

  /// The number of `key`, and whether it was new (numbered size() - 1).
  std::pair<uint32_t, bool> intern(std::span<const uint32_t> key) {
    const uint64_t h = Hash{}(key);
    size_t slot = 0;
    const uint32_t k = slots_.find(h, [&](uint32_t x) { return std::ranges::equal(this->key(x), key); }, slot);
    if (k != intern_detail::Slots::kEmpty) return {k, false};
    const uint32_t id = slots_.add(slot, h);
    words_.insert(words_.end(), key.begin(), key.end());
    begin_.push_back(words_.size());
    return {id, true};
  }

  std::span<const uint32_t> key(uint32_t id) const { return {words_.data() + begin_[id], words_.data() + begin_[id + 1]}; }
  size_t size() const { return slots_.size(); }

 private:
  std::vector<uint32_t> words_;   // the keys, end to end
  std::vector<size_t> begin_{0};  // key k: words_[begin_[k], begin_[k + 1])
  intern_detail::Slots slots_;
};

}  // namespace lockstep
