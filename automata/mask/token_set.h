// automata/mask/token_set.h — token sets in their most compact form, and the classification
// of the vocabulary for one automaton state (StateMask).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace lockstep {

/// A set of token ids in its most compact form.
class TokenSet {
 public:
  enum class Form : uint8_t { kIds, kComplement, kBitset };
  TokenSet() = default;
  /// `ids`: sorted, unique, < universe.
  static TokenSet from_sorted(std::vector<int32_t> ids, size_t universe);
  /// `bits`: uint32_t[ceil(universe / 32)] with `count` bits set.
  static TokenSet from_bits(std::vector<uint32_t> bits, size_t count, size_t universe);
  /// Sets the members' bits in `words` (uint32_t[ceil(universe / 32)]).
  void or_into(std::span<uint32_t> words) const;
  bool contains(int32_t id) const;
  size_t size() const { return count_; }
  Form form() const { return form_; }
  /// kIds: the members (ascending); kComplement: the non-members; kBitset: none.
  std::span<const int32_t> ids() const { return ids_; }
  size_t memory_bytes() const { return ids_.capacity() * 4 + bits_.capacity() * 4; }

 private:
  Form form_ = Form::kIds;
  size_t universe_ = 0;
  size_t count_ = 0;
  std::vector<int32_t> ids_;    // kIds: members; kComplement: non-members
  std::vector<uint32_t> bits_;  // kBitset
};

/// The classification of the vocabulary for one automaton state.
struct StateMask {
  TokenSet accepted;
  /// Suffixes (sorted) that must follow the completed rule, and the tokens behind each.
  std::vector<std::string> suffixes;
  std::vector<uint32_t> suffix_common;  ///< common prefix with the previous suffix
  /// The tokens behind suffix i (ascending): suffix_token_ids[suffix_token_begin[i] ..
  /// suffix_token_begin[i + 1]); one flat list, not a list per suffix (a state near the end
  /// of a length block has ~40,000 suffixes).
  std::vector<int32_t> suffix_token_ids;
  std::vector<uint32_t> suffix_token_begin;  ///< suffixes.size() + 1 entries, or none
  std::span<const int32_t> suffix_tokens(size_t i) const {
    return std::span<const int32_t>(suffix_token_ids).subspan(suffix_token_begin[i], suffix_token_begin[i + 1] - suffix_token_begin[i]);
  }
  size_t uncertain_tokens = 0;
  size_t rejected = 0;
  double compute_us = 0;
  size_t memory_bytes() const;
};

}  // namespace lockstep
