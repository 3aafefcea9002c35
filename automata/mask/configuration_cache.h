// automata/mask/configuration_cache.h — whole token bitmasks of parse configurations, shared
// by the matchers of one TokenMaskCache.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "grammar/hash.h"

namespace lockstep {

/// Whole token bitmasks of parse configurations, shared by every EarleyMatcher of one
/// TokenMaskCache (see matcher.h): a configuration is described by interned context ids,
/// and a configuration one sequence met is a copy for every other sequence of the same
/// grammar (each instance of a batch, each request of a server). Thread-safe. Bounded: past
/// 64 MiB of masks they start over; past 2^20 contexts everything starts over under a new
/// generation, and ids of an older generation are refused.
class ConfigurationCache {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  /// Current generation: ids handed out are valid only with it.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  /// The id of context description `desc`; kNone when `generation` is stale or the table
  /// is full (the next call starts a new generation).
  /// `desc` is copied only when it is new.
  uint32_t intern(std::span<const uint32_t> desc, uint64_t generation);
  /// The mask of configuration `key` (words: uint32_t[bitmask_words]), or null.
  std::shared_ptr<const std::vector<uint32_t>> find(const std::vector<uint32_t>& key, uint64_t generation) const;
  void insert(const std::vector<uint32_t>& key, std::vector<uint32_t> mask, uint64_t generation);

 private:
  static constexpr size_t kMaxContexts = 1u << 20;
  using Hash = U32SeqHash</*SeedWithLength=*/false, /*Fold=*/true>;
  // Looked up by a span as well as by a vector (no copy of a description already known).
  struct SpanHash : Hash {
    using is_transparent = void;
  };
  struct SpanEqual {
    using is_transparent = void;
    bool operator()(std::span<const uint32_t> a, std::span<const uint32_t> b) const {
      return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }
  };
  mutable std::mutex mutex_;
  std::atomic<uint64_t> generation_{0};
  std::unordered_map<std::vector<uint32_t>, uint32_t, SpanHash, SpanEqual> contexts_;
  std::unordered_map<std::vector<uint32_t>, std::shared_ptr<const std::vector<uint32_t>>, Hash> masks_;
  size_t mask_bytes_ = 0;
};

}  // namespace lockstep
