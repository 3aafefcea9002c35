// automata/mask/configuration_cache.cpp — whole masks of parse configurations (see
// configuration_cache.h).
#include "automata/mask/configuration_cache.h"

#include "grammar/limits.h"

namespace lockstep {

uint32_t ConfigurationCache::intern(std::span<const uint32_t> desc, uint64_t generation) {
  std::lock_guard lock(mutex_);
  if (generation != generation_.load(std::memory_order_relaxed)) return kNone;
  if (auto it = contexts_.find(desc); it != contexts_.end()) return it->second;
  if (contexts_.size() >= kMaxContexts) {
    contexts_.clear();
    masks_.clear();
    mask_bytes_ = 0;
    generation_.fetch_add(1, std::memory_order_release);
    return kNone;
  }
  const uint32_t id = static_cast<uint32_t>(contexts_.size());
  contexts_.emplace(std::vector<uint32_t>(desc.begin(), desc.end()), id);
  return id;
}

std::shared_ptr<const std::vector<uint32_t>> ConfigurationCache::find(const std::vector<uint32_t>& key,
                                                                      uint64_t generation) const {
  std::lock_guard lock(mutex_);
  if (generation != generation_.load(std::memory_order_relaxed)) return nullptr;
  auto it = masks_.find(key);
  return it == masks_.end() ? nullptr : it->second;
}

void ConfigurationCache::insert(const std::vector<uint32_t>& key, std::vector<uint32_t> mask, uint64_t generation) {
  const size_t size = (key.size() + mask.size()) * sizeof(uint32_t);
  auto stored = std::make_shared<const std::vector<uint32_t>>(std::move(mask));
  std::lock_guard lock(mutex_);
  if (generation != generation_.load(std::memory_order_relaxed)) return;
  if (mask_bytes_ + size > engine_limits().grammar_mask_bytes) {
    masks_.clear();
    mask_bytes_ = 0;
  }
  if (masks_.emplace(key, std::move(stored)).second) mask_bytes_ += size;
}

}  // namespace lockstep
