// runtime/pretokenizer.h — splitting text into words before BPE, and GPT-2's byte mapping.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace lockstep {

/// Splits text like HF tokenizers' `Split(pattern, behavior = "Isolated")`: every match
/// of the pattern and every stretch between matches becomes a piece, so the pieces
/// concatenate back to the input. Matching follows Perl/Oniguruma semantics (leftmost
/// start, first alternative that matches), evaluated with RE2; `\s` and `\S` mean the
/// Unicode White_Space property (RE2's own `\s` is ASCII-only). RE2 has no lookaround: a
/// negative lookahead `A(?!B)` ending a top-level alternative is emulated by backtracking
/// A's match end from the longest down until B does not match there (exact for the greedy
/// `\s+(?!\S)` the field's patterns use). Throws std::invalid_argument for other lookaround,
/// `\S` inside a class, or a pattern RE2 rejects.
class RegexSplitter {
 public:
  explicit RegexSplitter(std::string_view pattern);
  ~RegexSplitter();
  RegexSplitter(RegexSplitter&&) noexcept;
  RegexSplitter& operator=(RegexSplitter&&) noexcept;

  /// Appends the pieces of `text` to `out` (views into `text`).
  void split(std::string_view text, std::vector<std::string_view>& out) const;
  const std::string& pattern() const { return pattern_; }

 private:
  struct Alternative;
  long match_at(std::string_view text, size_t pos) const;  // length, or -1
  std::string pattern_;
  std::unique_ptr<re2::RE2> search_;
  std::vector<Alternative> alternatives_;
};

/// Applies splitters in sequence: each one splits every piece the previous produced
/// (llama.cpp's unicode_regex_split over a list of patterns).
std::vector<std::string_view> split_all(const std::vector<RegexSplitter>& splitters,
                                        std::string_view text);

/// llama.cpp's pre-tokenizer patterns for a GGUF `tokenizer.ggml.pre` name ("default",
/// "llama-bpe", "qwen2", "gpt-2", "deepseek-llm", …). Throws std::invalid_argument for a
/// name it does not know.
std::vector<std::string> pretokenizer_patterns(std::string_view pre_name);

/// GPT-2's byte ↔ code point map (bytes_to_unicode): printable bytes stand for themselves,
/// the other 68 bytes map to U+0100.. in order.
uint32_t byte_to_codepoint(uint8_t byte);
/// The byte a mapped code point stands for, or -1.
int codepoint_to_byte(uint32_t cp);
/// UTF-8 of the mapped form of `bytes`.
std::string byte_level_encode(std::string_view bytes);
/// Bytes of a mapped string; false when some code point is not in the map.
bool byte_level_decode(std::string_view mapped, std::string& out);

}  // namespace lockstep
