// automata/mask/shared_caches.cpp — the process-wide caches of the mask engine (see
// shared_caches.h).
#include "automata/mask/shared_caches.h"

#include <bit>
#include <cstddef>
#include <map>
#include <utility>

#include "grammar/limits.h"

namespace lockstep::mask {

const LongTokens& long_tokens(const Vocabulary& v, uint32_t cut_bytes) {
  static std::mutex mutex;
  static std::map<std::pair<uint64_t, uint32_t>, std::unique_ptr<const LongTokens>> by_vocabulary;
  std::lock_guard lock(mutex);
  auto& slot = by_vocabulary[{v.id(), cut_bytes}];
  if (!slot) {
    auto made = std::make_unique<LongTokens>();
    made->by_id.assign(v.bitmask_words(), 0);
    const auto sorted = v.sorted_text_tokens();
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (v.sorted_bytes(i).size() <= cut_bytes) continue;
      made->positions.push_back(static_cast<uint32_t>(i));
      made->by_id[static_cast<size_t>(sorted[i]) / 32] |= 1u << (sorted[i] % 32);
    }
    for (unsigned b = 0, k = 0; b <= 256; ++b) {
      while (k < made->positions.size() && made->positions[k] < v.sorted_first_byte_begin(b)) ++k;
      made->first_byte_begin[b] = static_cast<uint32_t>(k);
    }
    slot = std::move(made);
  }
  return *slot;
}

SharedStateMasks& SharedStateMasks::instance() {
  static SharedStateMasks cache;
  return cache;
}

SharedStateMasks::SharedStateMasks() : cache_([]() -> size_t { return engine_limits().mask_cache_bytes; }) {}

std::shared_ptr<const StateMask> SharedStateMasks::find(const std::string& key) {
  return cache_.find(key).value_or(nullptr);
}

void SharedStateMasks::insert(std::string key, std::shared_ptr<const StateMask> mask, bool alias) {
  const size_t size = key.size() + (alias ? 0 : mask->memory_bytes());
  cache_.insert(std::move(key), std::move(mask), size);
}

SharedSegments& SharedSegments::instance() {
  static SharedSegments cache;
  return cache;
}

std::shared_ptr<SharedSegments::Row> SharedSegments::row(const std::string& signature) {
  const size_t shard = std::hash<std::string>{}(signature) % kShards;
  std::lock_guard lock(mutex_);
  auto& slot = maps_[shard][signature];
  if (!slot) slot = std::make_shared<Row>();
  return slot;
}

size_t SharedSegments::Row::rank(uint8_t byte) const {
  size_t n = 0;
  for (unsigned w = 0; w < byte >> 6; ++w) n += static_cast<size_t>(std::popcount(held_[w]));
  const unsigned bit = byte & 63;
  return n + static_cast<size_t>(std::popcount(bit == 0 ? 0 : held_[byte >> 6] & ((uint64_t{1} << bit) - 1)));
}

std::shared_ptr<const Segment> SharedSegments::get(const Row& row, uint8_t byte) {
  std::lock_guard lock(mutex_);
  return row.holds(byte) ? row.segments_[row.rank(byte)] : nullptr;
}

void SharedSegments::put(Row& row, uint8_t byte, std::shared_ptr<const Segment> segment, size_t entries) {
  std::lock_guard lock(mutex_);
  if (entries_ + entries > kMaxEntries) {
    for (auto& map : maps_) map.clear();  // rows still held by walks stay valid, detached
    loop_sets_.clear();
    loop_shapes_.clear();
    entries_ = 0;
  }
  if (segment && !row.holds(byte)) {
    row.segments_.insert(row.segments_.begin() + static_cast<ptrdiff_t>(row.rank(byte)), std::move(segment));
    row.held_[byte >> 6] |= uint64_t{1} << (byte & 63);
    entries_ += entries;
  }
}

void SharedSegments::add_loop(uint64_t set_hash, const std::vector<uint64_t>& shapes) {
  std::lock_guard lock(mutex_);
  if (loop_sets_.insert(set_hash).second) loop_shapes_.insert(shapes.begin(), shapes.end());
}

bool SharedSegments::has_loop(uint64_t set_hash) {
  std::lock_guard lock(mutex_);
  return loop_sets_.count(set_hash) != 0;
}

bool SharedSegments::has_loop_shape(uint64_t shape) {
  std::lock_guard lock(mutex_);
  return loop_shapes_.count(shape) != 0;
}

}  // namespace lockstep::mask
