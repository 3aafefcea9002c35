// automata/mask/token_set.cpp — token sets in their most compact form (see token_set.h).
#include "automata/mask/token_set.h"

#include <algorithm>

#include "automata/token_bitmask.h"

namespace lockstep {

TokenSet TokenSet::from_sorted(std::vector<int32_t> ids, size_t universe) {
  TokenSet s;
  s.universe_ = universe;
  s.count_ = ids.size();
  // An id costs 4 bytes, a bitset universe / 8: lists win below universe / 32 members.
  if (ids.size() <= universe / 32) {
    s.form_ = Form::kIds;
    s.ids_ = std::move(ids);
  } else if (universe - ids.size() <= universe / 32) {
    s.form_ = Form::kComplement;
    size_t k = 0;
    for (size_t id = 0; id < universe; ++id) {
      if (k < ids.size() && static_cast<size_t>(ids[k]) == id) {
        ++k;
      } else {
        s.ids_.push_back(static_cast<int32_t>(id));
      }
    }
  } else {
    s.form_ = Form::kBitset;
    s.bits_.assign(bitmask_words(universe), 0);
    for (int32_t id : ids) set_bit(s.bits_, static_cast<size_t>(id));
  }
  s.ids_.shrink_to_fit();
  return s;
}

TokenSet TokenSet::from_bits(std::vector<uint32_t> bits, size_t count, size_t universe) {
  if (count > universe / 32 && universe - count > universe / 32) {
    TokenSet s;
    s.form_ = Form::kBitset;
    s.universe_ = universe;
    s.count_ = count;
    s.bits_ = std::move(bits);
    return s;
  }
  std::vector<int32_t> ids;
  ids.reserve(count);
  for_each_set_bit(bits, [&](size_t id) { ids.push_back(static_cast<int32_t>(id)); });
  return from_sorted(std::move(ids), universe);
}

void TokenSet::or_into(std::span<uint32_t> words) const {
  switch (form_) {
    case Form::kIds:
      for (int32_t id : ids_) set_bit(words, static_cast<size_t>(id));
      break;
    case Form::kBitset:
      for (size_t i = 0; i < bits_.size(); ++i) words[i] |= bits_[i];
      break;
    case Form::kComplement: {
      // All bits of the universe except the listed ones.
      size_t k = 0;
      const size_t n_words = bitmask_words(universe_);
      for (size_t w = 0; w < n_words; ++w) {
        uint32_t bits = w + 1 < n_words ? 0xFFFFFFFFu : last_word_bits(universe_);
        while (k < ids_.size() && static_cast<size_t>(ids_[k] >> 5) == w) {
          bits &= ~(1u << (ids_[k] & 31));
          ++k;
        }
        words[w] |= bits;
      }
      break;
    }
  }
}

bool TokenSet::contains(int32_t id) const {
  switch (form_) {
    case Form::kIds: return std::binary_search(ids_.begin(), ids_.end(), id);
    case Form::kComplement: return !std::binary_search(ids_.begin(), ids_.end(), id);
    case Form::kBitset: return test_bit(bits_, static_cast<size_t>(id));
  }
  return false;
}

size_t StateMask::memory_bytes() const {
  size_t n = sizeof(StateMask) + accepted.memory_bytes() + suffix_common.capacity() * 4;
  for (const auto& s : suffixes) n += sizeof(std::string) + s.capacity();
  n += suffix_token_ids.capacity() * 4 + suffix_token_begin.capacity() * 4;
  return n;
}

}  // namespace lockstep
