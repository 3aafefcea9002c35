// automata/mask/canonical_numbering.h — the breadth-first numbering behind the mask
// engine's canonical signatures (signatures.cpp: automaton-rule states; network_signatures.cpp:
// grammar-rule networks), and where a rule's structural hash stands. Internal to the mask
// engine.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "grammar/hash.h"

namespace lockstep::mask {

// Where TokenMaskCache::Impl::rule_hash() stands for a rule. kHashTooLarge: its network has
// more than kMaxHashedStates states not hashed before.
enum RuleHashState : uint8_t { kHashUnknown, kHashInProgress, kHashDone, kHashNone, kHashTooLarge };

// Breadth-first numbering of the states reachable from a start state, hashed to 128 bits as
// it goes: the canonical form behind both state signatures. The per-state index array is
// reused across calls; each call marks its entries with a fresh stamp instead of clearing.
class CanonicalNumbering {
 public:
  CanonicalNumbering(std::vector<uint64_t>& index, std::vector<uint32_t>& order, uint64_t& stamps,
                     uint32_t num_states, uint32_t start)
      : index_(index), order_(order), stamp_(++stamps << 32) {
    if (index_.size() != num_states) index_.assign(num_states, 0);
    order_.assign(1, start);
    index_[start] = stamp_;
  }
  /// States numbered so far, in order (grows while the caller walks it).
  const std::vector<uint32_t>& order() const { return order_; }
  /// The number of state `s`, numbering it next when it is new. Called per edge in the
  /// numbering loops, and inlined there (GCC stopped inlining it on its own when these
  /// functions left mask_cache.cpp, which cost ~7% of a signature's time).
  [[gnu::always_inline]] uint32_t number(uint32_t s) {
    uint64_t& slot = index_[s];
    if ((slot & ~uint64_t{0xFFFFFFFF}) != stamp_) {
      slot = stamp_ | order_.size();
      order_.push_back(s);
    }
    return static_cast<uint32_t>(slot);
  }
  void mix(uint64_t v) { digest_.mix(v); }
  void append_hash(std::string& out) const { digest_.append_to(out); }
  std::pair<uint64_t, uint64_t> hash() const { return digest_.value(); }

 private:
  std::vector<uint64_t>& index_;
  std::vector<uint32_t>& order_;
  const uint64_t stamp_;
  Digest128 digest_;
};

}  // namespace lockstep::mask
