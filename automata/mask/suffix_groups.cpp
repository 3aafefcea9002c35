// automata/mask/suffix_groups.cpp — see suffix_groups.h.
#include "automata/mask/suffix_groups.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

#include "automata/token_bitmask.h"
#include "grammar/hash.h"

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

// Groupings of long lists of pairs, process-wide: the states of every JSON string (a string
// body, a bounded string's first position, the prepared ones among them) list the same
// ~900 tokens that hold a quote of Llama 3's, each grouped in about 50 us, a sixth of the
// first mask inside a `maxLength` string. Keyed by a digest of the pairs that does not
// depend on their order (the sum of two independent 64-bit mixes of each pair, with their
// count and the vocabulary); past kMaxBytes the cache starts over. Thread-safe.
class GroupingCache {
 public:
  static constexpr size_t kMinPairs = 64;  // fewer: grouped in a few microseconds
  static constexpr size_t kMaxBytes = size_t{16} << 20;
  struct Grouping {
    std::vector<std::string> suffixes;
    std::vector<uint32_t> suffix_common;
    std::vector<int32_t> suffix_token_ids;
    std::vector<uint32_t> suffix_token_begin;
    size_t tokens = 0;
  };
  using Key = std::pair<uint64_t, uint64_t>;

  static GroupingCache& instance() {
    static GroupingCache* cache = new GroupingCache();  // never destroyed: used at exit
    return *cache;
  }
  static Key key_of(const Vocabulary& vocab, const std::vector<std::pair<int32_t, uint32_t>>& pairs) {
    uint64_t a = fmix64(vocab.id() ^ kGoldenRatio64), b = pairs.size();
    for (const auto& [id, offset] : pairs) {
      const uint64_t v = static_cast<uint64_t>(static_cast<uint32_t>(id)) << 32 | offset;
      a += fmix64(v);
      b += fmix64(v + kGoldenRatio64);
    }
    return {a, b};
  }
  std::shared_ptr<const Grouping> find(const Key& key) {
    std::lock_guard lock(mutex_);
    const auto it = map_.find(key);
    return it == map_.end() ? nullptr : it->second;
  }
  void put(const Key& key, const StateMask& out, size_t tokens) {
    auto g = std::make_shared<Grouping>();
    g->suffixes = out.suffixes;
    g->suffix_common = out.suffix_common;
    g->suffix_token_ids = out.suffix_token_ids;
    g->suffix_token_begin = out.suffix_token_begin;
    g->tokens = tokens;
    size_t bytes = sizeof(Grouping) + 8 * g->suffix_common.size() + 8 * g->suffix_token_ids.size();
    for (const std::string& x : g->suffixes) bytes += sizeof(std::string) + x.size();
    std::lock_guard lock(mutex_);
    if (used_ + bytes > kMaxBytes) {
      map_.clear();
      used_ = 0;
    }
    if (map_.emplace(key, std::move(g)).second) used_ += bytes;
  }

 private:
  struct KeyHash {
    size_t operator()(const Key& k) const { return static_cast<size_t>(k.first ^ k.second); }
  };
  std::mutex mutex_;
  std::unordered_map<Key, std::shared_ptr<const Grouping>, KeyHash> map_;
  size_t used_ = 0;
};

// The grouping itself (group_by_suffix() without the cache).
size_t group_pairs(const Vocabulary& vocab, std::vector<std::pair<int32_t, uint32_t>>& uncertain, StateMask& out);

}  // namespace

size_t group_by_suffix(const Vocabulary& vocab, std::vector<std::pair<int32_t, uint32_t>>& uncertain,
                       StateMask& out) {
  out.suffixes.clear();
  out.suffix_common.clear();
  out.suffix_token_ids.clear();
  out.suffix_token_begin.clear();
  if (uncertain.empty()) return 0;
  if (uncertain.size() < GroupingCache::kMinPairs) return group_pairs(vocab, uncertain, out);
  GroupingCache& cache = GroupingCache::instance();
  const GroupingCache::Key key = GroupingCache::key_of(vocab, uncertain);
  if (const auto hit = cache.find(key)) {
    out.suffixes = hit->suffixes;
    out.suffix_common = hit->suffix_common;
    out.suffix_token_ids = hit->suffix_token_ids;
    out.suffix_token_begin = hit->suffix_token_begin;
    return hit->tokens;
  }
  const size_t tokens = group_pairs(vocab, uncertain, out);
  cache.put(key, out, tokens);
  return tokens;
}

namespace {

size_t group_pairs(const Vocabulary& vocab, std::vector<std::pair<int32_t, uint32_t>>& uncertain, StateMask& out) {
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

}  // namespace

}  // namespace lockstep::mask
