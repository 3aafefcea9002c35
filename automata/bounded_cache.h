// automata/bounded_cache.h — a thread-safe map that starts over when it passes a budget:
// the shape of the process-wide caches (rule automata, shared state masks).
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace lockstep {

/// A mutex-guarded map with a soft budget. Each entry costs what its inserter says (bytes,
/// token entries, …); an insert that would take the total past the budget first drops every
/// entry, and the cache starts over (values copied out before stay valid). A key already
/// present keeps its first value, and the second insert costs nothing. Thread-safe: find and
/// insert take the one mutex.
template <class Key, class Value, class Hash = std::hash<Key>>
class BoundedCache {
 public:
  /// `budget` is read at every insert, under the lock, so a limit changed at run time
  /// (set_engine_limits) applies from the next insert on.
  explicit BoundedCache(size_t (*budget)()) : budget_(budget) {}
  BoundedCache(const BoundedCache&) = delete;
  BoundedCache& operator=(const BoundedCache&) = delete;

  /// A copy of the value stored under `key` (made under the lock), or nullopt.
  std::optional<Value> find(const Key& key) const {
    std::lock_guard lock(mutex_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }

  /// Stores `value` under `key` unless the key is present. When used() + cost would pass
  /// the budget, everything is dropped first.
  void insert(Key key, Value value, size_t cost) {
    std::lock_guard lock(mutex_);
    if (used_ + cost > budget_()) {
      map_.clear();
      used_ = 0;
    }
    if (map_.emplace(std::move(key), std::move(value)).second) used_ += cost;
  }

  /// The summed cost of the entries held.
  size_t used() const {
    std::lock_guard lock(mutex_);
    return used_;
  }

 private:
  size_t (*budget_)();
  mutable std::mutex mutex_;
  std::unordered_map<Key, Value, Hash> map_;
  size_t used_ = 0;
};

}  // namespace lockstep
