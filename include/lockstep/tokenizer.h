// include/lockstep/tokenizer.h — TokenizerInfo: what the grammar engine needs to know of a
// tokenizer (the exact bytes of every token, which tokens are special, which end generation)
// and the width of the model's logits.
//
// A model's logits are often wider than its tokenizer (Llama 3: 128,256 logits, 128,256
// tokens; Qwen: 151,936 logits, 151,665 tokens): `vocab_size` pads the vocabulary with
// special tokens that are never allowed, so masks line up with the logits.
//
// Creating one also prepares the engine's generic JSON building blocks for its vocabulary
// (any value, integers, an object of the common member types, bounded and long strings:
// their automata and masks), once per process and vocabulary: about 150 ms and 3 MB for
// Llama 3's 128k tokens, so a process's first schema does not build them itself
// (docs/masks.md, "Cold start").
//
// Thread-safety: a TokenizerInfo is immutable; copies share one vocabulary and may be used
// from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/errors.h"

namespace lockstep {

class Vocabulary;
class Tokenizer;

class TokenizerInfo {
 public:
  /// Loads any tokenizer file lockstep reads: a Hugging Face tokenizer.json (BPE), a GGUF
  /// file's vocabulary, GPT-2's encoder.json + vocab.bpe (the folder or either file), or a
  /// llama2.c tokenizer.bin. `vocab_size`: the logits width (>= the tokenizer's size; the
  /// default is the tokenizer's size). `stop_token_ids`: the ids that end generation (the
  /// default is the file's EOS/EOT ids). Throws TokenizerError / ModelFormatError naming
  /// the file and the place in it; std::invalid_argument for a bad size or id.
  static TokenizerInfo from_file(const std::string& path, std::optional<size_t> vocab_size = {},
                                 std::optional<std::vector<int32_t>> stop_token_ids = {});
  /// The same from the text of a tokenizer.json (a Hugging Face tokenizer's
  /// `backend_tokenizer.to_str()`). No tokenizer_config.json is read, so pass the stop ids
  /// the model uses (its generation config's eos_token_id). `name` stands for the file in
  /// errors.
  static TokenizerInfo from_tokenizer_json(std::string_view json_text, std::optional<size_t> vocab_size = {},
                                           std::optional<std::vector<int32_t>> stop_token_ids = {},
                                           const std::string& name = "tokenizer.json");
  /// A vocabulary given token by token: `token_bytes[id]` is exactly what token id adds to
  /// the output (raw bytes, not a BPE or SentencePiece spelling); ids in `special_token_ids`
  /// and `stop_token_ids` never match grammar text; the stop ids end generation. Such a
  /// TokenizerInfo cannot encode text. Throws std::invalid_argument on an id out of range
  /// or a vocab_size below token_bytes.size().
  static TokenizerInfo from_tokens(std::vector<std::string> token_bytes, std::vector<int32_t> stop_token_ids,
                                   std::vector<int32_t> special_token_ids = {},
                                   std::optional<size_t> vocab_size = {});

  /// The logits width: token ids are 0 .. vocab_size() - 1.
  size_t vocab_size() const;
  /// Tokens the tokenizer itself has (<= vocab_size(); the rest is padding).
  size_t tokenizer_size() const;
  /// uint32 words of one token bitmask: ceil(vocab_size() / 32).
  size_t bitmask_words() const;
  /// Ids that end generation, allowed only where the grammar is complete.
  std::vector<int32_t> stop_token_ids() const;
  /// Special (control) tokens: never part of grammar text. Padding ids included.
  bool is_special(int32_t id) const;
  /// Exact output bytes of token `id` (empty for special tokens and padding). Throws
  /// std::out_of_range for an id outside the vocabulary.
  std::string_view token_bytes(int32_t id) const;

  /// True when the tokenizer can encode text (not for from_tokens()).
  bool can_encode() const;
  /// Token ids of `text` (with add_bos, the BOS id first when the tokenizer has one).
  /// Throws std::logic_error when !can_encode().
  std::vector<int32_t> encode(std::string_view text, bool add_bos = false) const;
  /// Token ids whose bytes concatenate to exactly `text`, as it appears inside generated
  /// output (no SentencePiece dummy space in front): for checking a text against a grammar.
  /// Throws std::logic_error when !can_encode().
  std::vector<int32_t> encode_continuation(std::string_view text) const;
  /// Text of `ids` as the tokenizer's decoder renders it (special tokens omitted).
  std::string decode(std::span<const int32_t> ids) const;

  /// A fingerprint of the vocabulary as the engine sees it (bytes, kinds, stop ids, size):
  /// equal fingerprints, interchangeable vocabularies. 16 hex digits.
  const std::string& fingerprint() const;

  /// The engine's vocabulary (for code inside lockstep).
  const std::shared_ptr<const Vocabulary>& vocabulary() const;

  struct Impl;
  explicit TokenizerInfo(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace lockstep
