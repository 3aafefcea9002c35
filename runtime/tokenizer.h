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
  /// Token ids of `text` as it appears inside generated output, after other tokens: like
  /// encode(text, false) but without SentencePiece's dummy space prefix, so the tokens'
  /// bytes concatenate to exactly `text`.
  virtual std::vector<int32_t> encode_continuation(std::string_view text) const {
    return encode(text, false);
  }
  /// Text of `ids` as the tokenizer's own decoder renders it (control tokens omitted;
  /// SentencePiece drops the space it added in front of the first word).
  virtual std::string decode(std::span<const int32_t> ids) const;
  /// Printable name of a token (control tokens by name, e.g. "</s>").
  virtual std::string token_name(int32_t id) const;
  /// True when the piece right after BOS loses its leading space in decode() (llama2.c /
  /// SentencePiece dummy-prefix convention).
  virtual bool strips_space_after_bos() const { return false; }
  /// True when prompts start with BOS (the tokenizer has one and its format asks for it).
  virtual bool adds_bos() const { return bos_ >= 0; }

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

/// The raw contents of a llama2.c tokenizer.bin: pieces (spaces as ' ', bytes as "<0xNN>")
/// and their merge scores. Throws like load_llama2c_tokenizer.
struct Llama2cVocab {
  std::vector<std::string> pieces;
  std::vector<float> scores;
};
Llama2cVocab read_llama2c_vocab(const std::string& path, int32_t vocab_size = -1);

/// Loads a Hugging Face `tokenizer.json` with a BPE model: merges (as "a b" strings or
/// pairs), `ignore_merges`, `byte_fallback`, `unk_token`; normalizers NFC and
/// SentencePiece's Prepend/Replace; pre-tokenizers Split (Regex, Isolated), ByteLevel,
/// Metaspace and Sequence; added tokens (special ones are control tokens, the others
/// user-defined text matched whole). BOS/EOS come from tokenizer_config.json beside the
/// file when present, else from the post-processor template. Throws TokenizerError with
/// the JSON pointer (or byte offset, for malformed JSON) on anything it cannot use.
std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path);
/// The same from the text of a tokenizer.json (e.g. a Hugging Face tokenizer's
/// `backend_tokenizer.to_str()`); `name` stands for the file in errors. No
/// tokenizer_config.json is read: BOS/EOS come from the post-processor template.
std::unique_ptr<Tokenizer> load_hf_tokenizer_text(std::string_view text, const std::string& name);

/// Loads GPT-2's `encoder.json` + `vocab.bpe` (byte-level BPE, GPT-2 pre-tokenizer).
std::unique_ptr<Tokenizer> load_gpt2_tokenizer(const std::string& encoder_json,
                                               const std::string& vocab_bpe);

class GgufFile;
/// Loads the vocabulary of a GGUF file: tokenizer.ggml.model `llama` (SentencePiece: tokens,
/// scores, token types, byte fallback, space prefix) or `gpt2` (byte-level BPE: tokens,
/// merges, token types, pre-tokenizer `tokenizer.ggml.pre` as llama.cpp defines it), with
/// BOS/EOS/EOT ids. End of generation: EOS, EOT, EOM and the control tokens llama.cpp treats
/// so ("<|eot_id|>", "<|im_end|>", …). Throws ModelFormatError naming the missing or bad key.
std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& file);

/// Any tokenizer file, by kind: GGUF (magic), encoder.json / vocab.bpe (GPT-2, the pair in
/// one folder), *.json (tokenizer.json), else llama2.c tokenizer.bin.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path);

}  // namespace lockstep
