// automata/mask/shared_caches.h — the process-wide caches of the mask engine: state masks
// shared between grammars, and first-byte walk segments by successor signature. Internal to
// the mask engine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "automata/bounded_cache.h"
#include "automata/mask/token_set.h"
#include "automata/vocabulary.h"

namespace lockstep::mask {

// Tokens of at most this many bytes ("short": all but ~1,300 of Llama 3's 128k) are walked
// apart from the others in an automaton walk, their segments keyed by a signature cut at
// this depth (TokenMaskCache::Impl::short_signature).
inline constexpr uint32_t kShortTokenBytes = 16;
// A second, shorter cut for wide segments (79% of Llama 3's tokens have at most 8 bytes):
// the positions of a counted repeat closer than kShortTokenBytes to its bound share these.
inline constexpr uint32_t kMidTokenBytes = 8;

// One first-byte segment of a walk from a state of an automaton-only rule: the tokens that
// start with byte b, read on from the state s1 that b leads to. It depends on (s1, b) only,
// so states that share successors (the trie of an excluded key, the loop of a pattern)
// share their segments.
struct Segment {
  // With `complement`, the accepted tokens are the segment's tokens but `ids`; else `ids`.
  bool complement = false;
  std::vector<int32_t> ids;  // sorted
  std::vector<std::pair<int32_t, uint32_t>> uncertain;
  std::pair<uint64_t, uint64_t> digest;  // of the above: equal segments, equal digests
};

// The tokens of a vocabulary longer than a cut (kShortTokenBytes or kMidTokenBytes): their
// positions in the sorted vocabulary, and a bitmask by token id. Computed once per
// vocabulary, cut and process (thread-safe).
struct LongTokens {
  std::vector<uint32_t> positions;
  std::vector<uint32_t> by_id;
  // The long tokens whose first byte is b: positions[first_byte_begin[b], first_byte_begin[b + 1]).
  std::array<uint32_t, 257> first_byte_begin{};
  bool is_long(int32_t id) const { return (by_id[static_cast<size_t>(id) / 32] >> (id % 32)) & 1u; }
};
const LongTokens& long_tokens(const Vocabulary& vocabulary, uint32_t cut_bytes);

// Masks of states of automaton-only rules, shared by every TokenMaskCache of the process:
// such a state's classification depends only on its automaton, its index there, the rule's
// FOLLOW set and the vocabulary (e.g. "inside an unconstrained JSON string", recurring in
// every schema). Bounded: past EngineLimits::mask_cache_bytes it starts over.
class SharedStateMasks {
 public:
  static SharedStateMasks& instance();
  std::shared_ptr<const StateMask> find(const std::string& key);
  /// With `alias`, the mask is stored under another key already and only the key counts.
  void insert(std::string key, std::shared_ptr<const StateMask> mask, bool alias = false);
  /// Bytes held (keys, and masks stored under their first key), as counted against
  /// EngineLimits::mask_cache_bytes.
  size_t used() const { return cache_.used(); }

 private:
  SharedStateMasks();
  BoundedCache<std::string, std::shared_ptr<const StateMask>> cache_;
};

// Segments whose successor state has a canonical signature, shared by every TokenMaskCache
// of the process: a segment depends only on the automaton reachable from its successor
// state, the rule's FOLLOW set, the byte and the vocabulary. The generic string body of one
// schema serves the key strings, patterns and bounded strings of all later ones. Bounded:
// past kMaxEntries token entries it starts over.
class SharedSegments {
 public:
  // The segments of one successor signature, by first byte: sparse (a bitmap of the bytes
  // held and their segments in byte order), as most rows hold a few of the 256 (a key
  // trie's states); read and written only through get() and put().
  class Row {
    friend class SharedSegments;
    std::array<uint64_t, 4> held_{};
    std::vector<std::shared_ptr<const Segment>> segments_;
    bool holds(uint8_t byte) const { return (held_[byte >> 6] >> (byte & 63)) & 1; }
    size_t rank(uint8_t byte) const;  // the number of bytes held below `byte`
  };
  static SharedSegments& instance();
  /// The row of `signature`, made empty when new.
  std::shared_ptr<Row> row(const std::string& signature);
  std::shared_ptr<const Segment> get(const Row& row, uint8_t byte);
  void put(Row& row, uint8_t byte, std::shared_ptr<const Segment> segment, size_t entries);
  /// The shape sets (TokenMaskCache::Impl::short_shapes) of the loops whose short tokens'
  /// segments were stored under a depth-bounded signature, and the local shapes in them:
  /// only a state whose own shape is among these, and whose set is one of these, looks
  /// there. Forgotten with the rows when the cache starts over.
  void add_loop(uint64_t set_hash, const std::vector<uint64_t>& shapes);
  bool has_loop(uint64_t set_hash);
  bool has_loop_shape(uint64_t shape);

 private:
  static constexpr size_t kMaxEntries = size_t{32} << 20;
  // The rows in kShards maps by the signature's hash: a map rehashes all its entries at once
  // when it grows, and one map of every row did so inside a mask (a tenth of a long pattern's
  // 0.6 ms mask in a fresh process, after the prepared building blocks' rows); a shard
  // rehashes a 64th of them.
  static constexpr size_t kShards = 64;
  std::mutex mutex_;
  std::array<std::unordered_map<std::string, std::shared_ptr<Row>>, kShards> maps_;
  std::unordered_set<uint64_t> loop_sets_, loop_shapes_;  // cleared with maps_
  size_t entries_ = 0;
};

}  // namespace lockstep::mask
