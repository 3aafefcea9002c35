// runtime/tokenizer.h — text ↔ token ids, and the exact bytes of every token.
//
// Every tokenizer exposes its vocabulary as the grammar engine sees it (automata
// Vocabulary): token_bytes(id) is exactly what the token adds to the output, control
// tokens are flagged, and the end-of-generation ids are listed.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "automata/vocabulary.h"

namespace lockstep {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  /// Token ids of `text`; with add_bos, the beginning-of-sequence id first (if the
  /// tokenizer has one).
  virtual std::vector<int32_t> encode(std::string_view text, bool add_bos) const = 0;
  /// Text of `ids` as the tokenizer's own decoder renders it (control tokens omitted;
  /// SentencePiece drops the space it added in front of the first word).
  virtual std::string decode(std::span<const int32_t> ids) const;
  /// Printable name of a token (control tokens by name, e.g. "</s>").
  virtual std::string token_name(int32_t id) const;
  /// True when the piece right after BOS loses its leading space in decode() (llama2.c /
  /// SentencePiece dummy-prefix convention).
  virtual bool strips_space_after_bos() const { return false; }

  size_t size() const { return vocab_->size(); }
  int32_t bos_id() const { return bos_; }
  int32_t eos_id() const { return eos_; }
  std::string_view token_bytes(int32_t id) const { return vocab_->token_bytes(id); }
  const Vocabulary& vocabulary() const { return *vocab_; }
  std::shared_ptr<const Vocabulary> shared_vocabulary() const { return vocab_; }

 protected:
  std::shared_ptr<const Vocabulary> vocab_;
  int32_t bos_ = -1;
  int32_t eos_ = -1;
};

/// Loads a llama2.c `tokenizer.bin` (int32 max_token_length, then per token: float32
/// score, int32 length, bytes) with SentencePiece BPE semantics: dummy space prefix,
/// merges by score, byte fallback `<0xNN>`, BOS = 1, EOS = 2; 0..2 are control tokens.
/// llama2.c's run.c ends a sequence at BOS, so BOS and EOS both end generation.
/// `vocab_size` (from the model header) bounds the token count; -1 reads to end of file.
/// Throws TokenizerError with the byte offset on truncated or inconsistent files.
std::unique_ptr<Tokenizer> load_llama2c_tokenizer(const std::string& path, int32_t vocab_size = -1);

}  // namespace lockstep
