// InternTable checked against std::unordered_map numbering the same keys in the same order,
// through many rehashes, and with a hash that sends every key to one slot (every lookup then
// probes past the others).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <span>
#include <random>
#include <unordered_map>
#include <vector>

#include "grammar/hash.h"
#include "grammar/intern_table.h"

namespace lockstep {
namespace {

struct Mixed {
  uint64_t operator()(uint64_t k) const { return fmix64(k); }
};
struct Colliding {
  uint64_t operator()(uint64_t) const { return 0x8000000000000000ull; }
};

template <typename Hash>
void check_against_map(size_t keys, uint64_t range, size_t expected) {
  std::mt19937_64 rng(keys);
  InternTable<uint64_t, Hash> table(expected);
  std::unordered_map<uint64_t, uint32_t> reference;
  for (size_t i = 0; i < keys; ++i) {
    const uint64_t k = rng() % range;
    const auto [it, fresh] = reference.try_emplace(k, static_cast<uint32_t>(reference.size()));
    const auto [id, was_new] = table.intern(k);
    ASSERT_EQ(id, it->second) << "key " << k;
    ASSERT_EQ(was_new, fresh) << "key " << k;
    ASSERT_EQ(table.size(), reference.size());
  }
  for (const auto& [k, id] : reference) EXPECT_EQ(table.key(id), k);
}

TEST(InternTable, NumbersKeysInTheOrderMetThroughRehashes) {
  check_against_map<Mixed>(20000, 5000, 1);        // most keys repeat; grows from 32 slots
  check_against_map<Mixed>(20000, 1ull << 62, 16);  // all distinct
  // Packed pairs (x << 32 | y), as the automaton products key their states.
  InternTable<uint64_t, Mixed> pairs;
  for (uint64_t x = 0; x < 100; ++x) {
    for (uint64_t y = 0; y < 100; ++y) EXPECT_EQ(pairs.intern(x << 32 | y).first, x * 100 + y);
  }
  EXPECT_EQ(pairs.intern(uint64_t{42} << 32 | 7), std::make_pair(uint32_t{4207}, false));
}

TEST(InternTable, FindsKeysThatShareOneSlot) { check_against_map<Colliding>(600, 300, 4); }

struct SeqColliding {
  uint64_t operator()(std::span<const uint32_t>) const { return 0x8000000000000000ull; }
};

// SeqInternTable against std::map numbering word sequences (empty ones, prefixes of one
// another, repeats) in the order met; the keys read back after every rehash.
template <typename Hash>
void check_sequences(size_t keys, uint32_t alphabet, size_t expected) {
  std::mt19937 rng(static_cast<unsigned>(keys));
  SeqInternTable<Hash> table(expected);
  std::map<std::vector<uint32_t>, uint32_t> reference;
  for (size_t i = 0; i < keys; ++i) {
    std::vector<uint32_t> k(rng() % 5);
    for (auto& w : k) w = rng() % alphabet;
    const auto [it, fresh] = reference.try_emplace(k, static_cast<uint32_t>(reference.size()));
    const auto [id, was_new] = table.intern(k);
    ASSERT_EQ(id, it->second);
    ASSERT_EQ(was_new, fresh);
    ASSERT_EQ(table.size(), reference.size());
  }
  for (const auto& [k, id] : reference) {
    const auto got = table.key(id);
    EXPECT_EQ(std::vector<uint32_t>(got.begin(), got.end()), k);
  }
}

TEST(SeqInternTable, NumbersSequencesInTheOrderMetThroughRehashes) {
  check_sequences<MixedSeqHash>(20000, 4, 1);
  check_sequences<MixedSeqHash>(20000, 1000, 16);
  check_sequences<SeqColliding>(600, 3, 4);
}

}  // namespace
}  // namespace lockstep
