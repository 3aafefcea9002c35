// automata/mask/suffix_groups.cpp — see suffix_groups.h.
#include "automata/mask/suffix_groups.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "automata/token_bitmask.h"

namespace lockstep::mask {

namespace {

// A pair as sorted: the suffix's first 8 bytes big-endian (zero-padded, so a shorter suffix
// that is a prefix of a longer one sorts first by `len`), then a tie-break word.
struct Key {
  uint64_t head;
  uint32_t tie;  // len_code << 28 | token id: len_code is the length, 9 for more than 8
  uint32_t offset, len;  // the suffix's place in the token's bytes
};
constexpr uint32_t kIdBits = 28;

uint64_t head_of(std::string_view sfx) {
  uint64_t h = 0;
  if (sfx.size() >= 8) {
    std::array<unsigned char, 8> b;
    std::memcpy(b.data(), sfx.data(), 8);
    for (const unsigned char c : b) h = h << 8 | c;  // one byte swap where the host is little-endian
    return h;
  }
  for (size_t i = 0; i < 8; ++i) h = h << 8 | (i < sfx.size() ? static_cast<unsigned char>(sfx[i]) : 0u);
  return h;
}

// The bytes of suffix k past its first 8.
std::string_view rest_of(const Vocabulary& vocab, const Key& k) {
  return vocab.token_bytes(static_cast<int32_t>(k.tie & ((1u << kIdBits) - 1))).substr(k.offset + 8);
}
int32_t id_of(const Key& k) { return static_cast<int32_t>(k.tie & ((1u << kIdBits) - 1)); }

// Least-significant-digit radix sort of `keys` by (head, tie), a byte at a time (digit d < 4
// of tie, then d - 4 of head). The counts of every digit are taken in one pass; a digit on
// which all keys agree is skipped.
void radix_sort(std::vector<Key>& keys, std::vector<Key>& scratch) {
  constexpr int kDigits = 12;
  auto digit = [](const Key& k, int d) {
    return static_cast<uint32_t>(d < 4 ? k.tie >> (8 * d) : k.head >> (8 * (d - 4))) & 0xffu;
  };
  std::vector<std::array<uint32_t, 256>> count(kDigits);
  for (auto& c : count) c.fill(0);
  for (const Key& k : keys) {
    for (int d = 0; d < kDigits; ++d) ++count[d][digit(k, d)];
  }
  scratch.resize(keys.size());
  for (int d = 0; d < kDigits; ++d) {
    auto& c = count[d];
    if (c[digit(keys[0], d)] == keys.size()) continue;  // one bucket
    uint32_t sum = 0;
    for (uint32_t& n : c) {
      const uint32_t here = n;
      n = sum;
      sum += here;
    }
    for (const Key& k : keys) scratch[c[digit(k, d)]++] = k;
    keys.swap(scratch);
  }
}

}  // namespace

size_t group_by_suffix(const Vocabulary& vocab, std::vector<std::pair<int32_t, uint32_t>>& uncertain,
                       StateMask& out) {
  out.suffixes.clear();
  out.suffix_common.clear();
  out.suffix_token_ids.clear();
  out.suffix_token_begin.clear();
  if (uncertain.empty()) return 0;
  std::vector<Key> keys;
  keys.reserve(uncertain.size());
  if (vocab.size() > (size_t{1} << kIdBits)) {
    throw std::length_error("the mask engine handles vocabularies of at most 2^28 tokens, this one has " +
                            std::to_string(vocab.size()));
  }
  for (const auto& [id, offset] : uncertain) {
    const std::string_view sfx = vocab.token_bytes(id).substr(offset);
    const uint32_t len = static_cast<uint32_t>(sfx.size());
    keys.push_back({head_of(sfx), std::min<uint32_t>(len, 9) << kIdBits | static_cast<uint32_t>(id), offset, len});
  }
  if (keys.size() < 256) {
    std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) { return a.head != b.head ? a.head < b.head : a.tie < b.tie; });
  } else {
    std::vector<Key> scratch;
    radix_sort(keys, scratch);
  }
  // Suffixes longer than 8 bytes sharing their first 8: in order of their remaining bytes.
  const uint32_t long_code = 9u << kIdBits;
  for (size_t i = 0; i < keys.size();) {
    size_t j = i + 1;
    if (keys[i].tie >= long_code) {
      while (j < keys.size() && keys[j].head == keys[i].head && keys[j].tie >= long_code) ++j;
      if (j - i > 1) {
        std::sort(keys.begin() + static_cast<ptrdiff_t>(i), keys.begin() + static_cast<ptrdiff_t>(j), [&](const Key& a, const Key& b) {
          if (const int c = rest_of(vocab, a).compare(rest_of(vocab, b)); c != 0) return c < 0;
          return a.tie < b.tie;
        });
      }
    }
    i = j;
  }
  // Grouped, each distinct token counted once.
  std::vector<uint32_t> seen(vocab.bitmask_words(), 0);
  size_t tokens = 0;
  const Key* previous = nullptr;
  for (const Key& k : keys) {
    const int32_t id = id_of(k);
    bool same = false;
    uint32_t common = 0;
    if (previous != nullptr) {
      const uint32_t shorter = std::min(k.len, previous->len);
      if (k.head != previous->head) {
        common = std::min<uint32_t>(static_cast<uint32_t>(std::countl_zero(k.head ^ previous->head)) / 8, shorter);
      } else if (shorter <= 8) {
        common = shorter;
        same = k.len == previous->len;
      } else {
        const std::string_view a = rest_of(vocab, *previous), b = rest_of(vocab, k);
        const auto diff = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
        common = 8 + static_cast<uint32_t>(diff.first - a.begin());
        same = diff.first == a.end() && diff.second == b.end();
      }
      if (same && id_of(*previous) == id) continue;  // the same pair twice
    }
    if (!same) {
      std::string sfx;
      if (k.len <= 8) {
        sfx.resize(k.len);
        for (uint32_t b = 0; b < k.len; ++b) sfx[b] = static_cast<char>(k.head >> (56 - 8 * b));
      } else {
        sfx = vocab.token_bytes(id).substr(k.offset);
      }
      out.suffixes.push_back(std::move(sfx));
      out.suffix_common.push_back(previous == nullptr ? 0 : common);
      out.suffix_token_begin.push_back(static_cast<uint32_t>(out.suffix_token_ids.size()));
    }
    out.suffix_token_ids.push_back(id);
    if (!test_bit(seen, static_cast<size_t>(id))) {
      set_bit(seen, static_cast<size_t>(id));
      ++tokens;
    }
    previous = &k;
  }
  out.suffix_token_begin.push_back(static_cast<uint32_t>(out.suffix_token_ids.size()));
  return tokens;
}

}  // namespace lockstep::mask
