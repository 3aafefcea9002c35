// automata/vocabulary.cpp — see vocabulary.h.
#include "automata/vocabulary.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>

namespace lockstep {

Vocabulary::Vocabulary(std::vector<std::string> bytes, std::vector<TokenKind> kinds, std::vector<int32_t> eog_ids)
    : kinds_(std::move(kinds)), eog_ids_(std::move(eog_ids)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id.fetch_add(1);
  if (kinds_.size() != bytes.size()) {
    throw std::invalid_argument("Vocabulary: token kinds and token bytes differ in length");
  }
  for (int32_t id : eog_ids_) {
    if (id < 0 || static_cast<size_t>(id) >= bytes.size()) {
      throw std::invalid_argument("Vocabulary: end-of-generation id out of range");
    }
    kinds_[static_cast<size_t>(id)] = TokenKind::kControl;
  }
  std::sort(eog_ids_.begin(), eog_ids_.end());
  eog_ids_.erase(std::unique(eog_ids_.begin(), eog_ids_.end()), eog_ids_.end());
  for (size_t id = 0; id < bytes.size(); ++id) {
    if (kinds_[id] == TokenKind::kText && !bytes[id].empty()) {
      sorted_.push_back(static_cast<int32_t>(id));
    }
  }
  text_bits_.assign(bitmask_words(), 0);
  for (const int32_t id : sorted_) set_bit(text_bits_, static_cast<size_t>(id));
  std::sort(sorted_.begin(), sorted_.end(),
            [&](int32_t a, int32_t b) { return bytes[a] < bytes[b]; });
  sorted_offset_.reserve(sorted_.size() + 1);
  for (int32_t id : sorted_) {
    sorted_offset_.push_back(static_cast<uint32_t>(sorted_text_.size()));
    sorted_text_ += bytes[id];
  }
  for (const auto& b : bytes) max_token_bytes_ = std::max(max_token_bytes_, b.size());
  sorted_offset_.push_back(static_cast<uint32_t>(sorted_text_.size()));
  rest_kinds_.resize(sorted_.size(), 0);
  for (size_t i = 0; i < sorted_.size(); ++i) {
    const std::string& b = bytes[sorted_[i]];
    for (size_t k = 1; k < b.size(); ++k) rest_kinds_[i] |= byte_kind(static_cast<uint8_t>(b[k]));
  }
  common_prefix_.resize(sorted_.size(), 0);
  for (size_t i = 1; i < sorted_.size(); ++i) {
    const std::string& a = bytes[sorted_[i - 1]];
    const std::string& b = bytes[sorted_[i]];
    const size_t n = std::min(a.size(), b.size());
    size_t k = 0;
    while (k < n && a[k] == b[k]) ++k;
    common_prefix_[i] = static_cast<uint32_t>(k);
  }
  // Tokens are sorted by unsigned bytes, so each first byte's tokens are one run.
  for (size_t b = 0, at = 0; b <= 256; ++b) {
    while (at < sorted_.size() && static_cast<uint8_t>(sorted_text_[sorted_offset_[at]]) < b) ++at;
    first_byte_begin_[b] = static_cast<uint32_t>(at);
  }
  // prefix_end_[offset(i) + n - 1]: where the run of tokens sharing token i's first n bytes
  // ends. Token i + 1 shares them iff its common prefix with i is at least n, and then its
  // run ends where i's does: one backward pass, one entry per byte of the sorted text.
  prefix_end_.resize(sorted_text_.size());
  for (size_t i = sorted_.size(); i-- > 0;) {
    const size_t len = sorted_offset_[i + 1] - sorted_offset_[i];
    const size_t shared = i + 1 < sorted_.size() ? common_prefix_[i + 1] : 0;
    for (size_t n = 1; n <= len; ++n) {
      prefix_end_[sorted_offset_[i] + n - 1] =
          n <= shared ? prefix_end_[sorted_offset_[i + 1] + n - 1] : static_cast<uint32_t>(i + 1);
    }
  }
  // Every token's bytes as a span of one buffer: the sorted tokens' where they are, the
  // others (control tokens, empty ones) appended.
  token_span_.assign(bytes.size(), {0, 0});
  for (size_t i = 0; i < sorted_.size(); ++i) {
    token_span_[static_cast<size_t>(sorted_[i])] = {sorted_offset_[i], sorted_offset_[i + 1] - sorted_offset_[i]};
  }
  for (size_t id = 0; id < bytes.size(); ++id) {
    if (kinds_[id] == TokenKind::kText && !bytes[id].empty()) continue;
    if (sorted_text_.size() + bytes[id].size() > UINT32_MAX) {
      throw std::invalid_argument("Vocabulary: more than 2^32 bytes of token text");
    }
    token_span_[id] = {static_cast<uint32_t>(sorted_text_.size()), static_cast<uint32_t>(bytes[id].size())};
    sorted_text_ += bytes[id];
  }
}

size_t Vocabulary::sorted_prefix_end(size_t i, size_t n) const {
  // Most runs a walk skips are a few tokens long: their end is read from the common prefixes
  // that follow, in order (memory the walk reads next anyway), and only a longer run looks
  // up the table, whose entry is one cache miss in 3.4 MB.
  const size_t stop = std::min(i + 1 + kScannedRun, sorted_.size());
  for (size_t j = i + 1; j < stop; ++j) {
    if (common_prefix_[j] < n) return j;
  }
  if (stop == sorted_.size()) return stop;
  return prefix_end_[sorted_offset_[i] + n - 1];
}

bool Vocabulary::extends(std::string_view prefix) const {
  size_t lo = 0, hi = sorted_.size();
  while (lo < hi) {  // the first token after `prefix` in byte order
    const size_t mid = lo + (hi - lo) / 2;
    if (sorted_bytes(mid) <= prefix) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < sorted_.size() && sorted_bytes(lo).substr(0, prefix.size()) == prefix;
}

bool Vocabulary::is_eog(int32_t id) const {
  return std::binary_search(eog_ids_.begin(), eog_ids_.end(), id);
}

}  // namespace lockstep
