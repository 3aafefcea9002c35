// automata/vocabulary.h — what the grammar engine knows of a tokenizer's vocabulary.
//
// For each token id: the exact bytes it contributes to the output, and whether it is a
// control token (BOS, EOS, chat markers, …: never matches grammar text). End-of-generation
// (EOG) ids are the only tokens allowed once the grammar accepts, and only then.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "automata/token_bitmask.h"

namespace lockstep {

enum class TokenKind : uint8_t {
  kText,     ///< ordinary token: its bytes are output text
  kControl,  ///< special/control token: never matches grammar text
};

namespace vocabulary_detail {
// The kind of each byte (Vocabulary::byte_kind).
constexpr std::array<uint8_t, 256> byte_kinds() {
  std::array<uint8_t, 256> kind{};
  auto set = [&](unsigned lo, unsigned hi, uint8_t k) {
    for (unsigned b = lo; b <= hi; ++b) kind[b] = k;
  };
  set(0x21, 0x7E, 26);  // ASCII punctuation not named below
  set(0x00, 0x1F, 0);
  set(' ', ' ', 1);
  set('"', '"', 2);
  set('\\', '\\', 3);
  set('0', '9', 4);
  set('a', 'f', 5);
  set('g', 'z', 6);
  set('A', 'F', 7);
  set('G', 'Z', 8);
  uint8_t k = 9;
  for (const char* group : {"_", "-", ".", "/", ":", "+", ",", "@", "%", "#", "'", "=", "&", "()", "[]", "{}", "$"}) {
    for (const char* c = group; *c; ++c) kind[static_cast<uint8_t>(*c)] = k;
    ++k;
  }
  set(0x7F, 0x7F, 27);
  set(0x80, 0xBF, 28);
  set(0xC0, 0xDF, 29);
  set(0xE0, 0xEF, 30);
  set(0xF0, 0xFF, 31);
  return kind;
}
}  // namespace vocabulary_detail

class Vocabulary {
 public:
  /// `token_bytes[id]`: bytes of token id. `kinds[id]`: its kind. `eog_ids`: ids that end
  /// generation (they are treated as control tokens). Throws std::invalid_argument when the
  /// sizes disagree or an EOG id is out of range.
  Vocabulary(std::vector<std::string> token_bytes, std::vector<TokenKind> kinds,
             std::vector<int32_t> eog_ids);

  size_t size() const { return kinds_.size(); }
  /// A number no other Vocabulary object of this process has (copies keep it): a key for
  /// caches shared across grammars.
  uint64_t id() const { return id_; }
  /// Number of uint32 words in a token bitmask: ceil(size() / 32).
  size_t bitmask_words() const { return lockstep::bitmask_words(kinds_.size()); }
  /// Bytes of token id, from the same contiguous buffer as sorted_bytes() (8 bytes of index
  /// per token instead of a std::string each: the suffix sorts of uncertain tokens read
  /// thousands of tokens in id order).
  std::string_view token_bytes(int32_t id) const {
    const auto [begin, size] = token_span_[static_cast<size_t>(id)];
    return {sorted_text_.data() + begin, size};
  }
  bool is_control(int32_t id) const { return kinds_[static_cast<size_t>(id)] == TokenKind::kControl; }
  bool is_eog(int32_t id) const;
  std::span<const int32_t> eog_ids() const { return eog_ids_; }

  /// Text tokens with non-empty bytes, sorted by bytes (memcmp order): a prefix's tokens
  /// form one contiguous run right after it.
  std::span<const int32_t> sorted_text_tokens() const { return sorted_; }
  /// The same tokens as a token bitmask (bitmask_words() words, 16 KB for Llama 3), set
  /// once here: a mask that accepts most of the vocabulary starts from a copy of it instead
  /// of setting 128k bits one by one (about 50 µs, once per grammar).
  std::span<const uint32_t> text_token_bits() const { return text_bits_; }
  /// One past the last sorted position whose token shares its first `n` bytes with the token
  /// at sorted position i (which must have at least n bytes, n >= 1). O(1): a table of one
  /// uint32 per byte of the sorted vocabulary (3.4 MB for Llama 3's 128k tokens), read only
  /// for a run longer than kScannedRun tokens.
  size_t sorted_prefix_end(size_t i, size_t n) const;
  static constexpr size_t kScannedRun = 16;
  /// The sorted positions of the text tokens whose first byte is `b`: [begin(b), begin(b + 1)).
  size_t sorted_first_byte_begin(unsigned b) const { return first_byte_begin_[b]; }
  /// True when some text token's bytes start with `prefix` and are longer (O(log size)).
  bool extends(std::string_view prefix) const;
  /// Length of the longest token, in bytes.
  size_t max_token_bytes() const { return max_token_bytes_; }
  /// Bytes of the token at sorted position i, from one contiguous buffer in sorted order
  /// (a walk over the sorted vocabulary reads memory sequentially).
  std::string_view sorted_bytes(size_t i) const {
    return {sorted_text_.data() + sorted_offset_[i], sorted_offset_[i + 1] - sorted_offset_[i]};
  }
  /// For sorted position i: length of the common prefix of tokens i-1 and i (0 for i = 0).
  std::span<const uint32_t> sorted_common_prefix() const { return common_prefix_; }
  /// The kind of byte `b` as a bit: each kind is a run of bytes that character classes
  /// rarely split (control bytes, space, digits, a-f, g-z, A-F, G-Z, each common
  /// punctuation mark, the rest of ASCII's punctuation, UTF-8 continuation and lead bytes).
  static uint32_t byte_kind(uint8_t b) { return uint32_t{1} << kByteKinds[b]; }
  /// For sorted position i: the byte_kind() bits of token i's bytes after its first, OR-ed.
  /// A walk that reads a class of bytes alike tells from it in one load whether a token's
  /// rest is all in the class (when the class is a union of whole kinds), where a scan of
  /// the bytes mispredicts its exit once per token (automaton_walk.cpp, uniform runs).
  /// 4 bytes per text token, made at load.
  std::span<const uint32_t> sorted_rest_kinds() const { return rest_kinds_; }
  /// For sorted position i: one past the last sorted position whose token starts with
  /// token i's bytes (its subtree in the vocabulary trie, computed by prefix: "luk" does not
  /// cover "luluk"): the run of its whole bytes.
  size_t sorted_subtree_end(size_t i) const { return sorted_prefix_end(i, sorted_bytes(i).size()); }

 private:
  std::vector<std::pair<uint32_t, uint32_t>> token_span_;  // per id: offset in sorted_text_, size
  std::vector<TokenKind> kinds_;
  std::vector<int32_t> eog_ids_;
  std::vector<int32_t> sorted_;
  std::vector<uint32_t> text_bits_;  // see text_token_bits()
  static constexpr std::array<uint8_t, 256> kByteKinds = vocabulary_detail::byte_kinds();
  std::vector<uint32_t> common_prefix_;
  std::vector<uint32_t> rest_kinds_;  // see sorted_rest_kinds()
  std::string sorted_text_;  // the sorted text tokens' bytes, then the other tokens'
  std::vector<uint32_t> sorted_offset_;  // sorted_.size() + 1
  size_t max_token_bytes_ = 0;
  std::vector<uint32_t> prefix_end_;  // per byte of sorted_text_: see sorted_prefix_end()
  std::array<uint32_t, 257> first_byte_begin_{};  // see sorted_first_byte_begin()
  uint64_t id_ = 0;
};

}  // namespace lockstep
