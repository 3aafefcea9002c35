// runtime/vocab_tokenizer.h — the one tokenizer behind tokenizer.json, GPT-2 vocab files
// and GGUF vocabularies, configured by what each format declares.
//
// Pipeline for encode(): split out added/special tokens (longest first) → per remaining
// fragment: NFC (optional) → SentencePiece space handling (optional dummy prefix, ' ' →
// U+2581) → regex pre-tokenization → GPT-2 byte mapping (byte-level models) → per word:
// BPE by merge rank (Sennrich et al. 2016; HF tokenizers / llama.cpp BPE) or by token score
// (SentencePiece BPE, Kudo & Richardson 2018; llama.cpp SPM), with byte fallback.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/pretokenizer.h"
#include "runtime/tokenizer.h"

namespace lockstep {

/// Token attributes, as llama.cpp / GGUF token types define them.
enum class TokenAttr : uint8_t {
  kNormal,       ///< GGUF 1
  kUnknown,      ///< GGUF 2: the unknown token
  kControl,      ///< GGUF 3: BOS, EOS, chat markers
  kUserDefined,  ///< GGUF 4: added tokens matched whole in text, output as text
  kUnused,       ///< GGUF 5
  kByte,         ///< GGUF 6: <0xNN>
};

struct VocabConfig {
  enum class Merge { kRanks, kScores };
  Merge merge = Merge::kRanks;
  bool byte_level = false;        ///< words are GPT-2 byte-mapped; token strings are mapped
  bool byte_fallback = false;     ///< unknown characters become <0xNN> tokens
  bool ignore_merges = false;     ///< a word that is a token is taken whole (Llama 3)
  bool nfc = false;               ///< NFC-normalize text fragments (Qwen)
  bool add_space_prefix = false;  ///< ' ' before each fragment that follows a special token or starts the text
  bool metaspace = false;         ///< ' ' → U+2581 (SentencePiece), and U+2581 → ' ' in token bytes
  bool decode_strips_prefix = false;  ///< decode() drops the leading space add_space_prefix adds
  bool add_bos = false;           ///< encode(…, add_bos = true) puts BOS first
  std::vector<RegexSplitter> splitters;
  int32_t unk = -1, bos = -1, eos = -1;
  std::vector<int32_t> eog;
};

struct VocabData {
  std::vector<std::string> tokens;  ///< token text in the model's alphabet (mapped / U+2581)
  std::vector<TokenAttr> attrs;
  std::vector<float> scores;        ///< Merge::kScores
  std::vector<std::pair<std::string, std::string>> merges;  ///< Merge::kRanks, by rank
};

class VocabTokenizer : public Tokenizer {
 public:
  /// Throws std::invalid_argument for inconsistent data (sizes, ids out of range).
  VocabTokenizer(VocabData data, VocabConfig config);

  std::vector<int32_t> encode(std::string_view text, bool add_bos) const override;
  /// `parse_special`: also match control tokens written in the text (e.g. "<|im_end|>");
  /// user-defined tokens are always matched.
  std::vector<int32_t> encode(std::string_view text, bool add_bos, bool parse_special) const;
  std::vector<int32_t> encode_continuation(std::string_view text) const override;
  std::string decode(std::span<const int32_t> ids) const override;
  std::string token_name(int32_t id) const override;
  bool strips_space_after_bos() const override { return config_.decode_strips_prefix; }
  bool adds_bos() const override { return config_.add_bos && config_.bos >= 0; }

  const VocabData& data() const { return data_; }
  const VocabConfig& config() const { return config_; }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using TokenMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

  int32_t find(std::string_view text) const;
  std::vector<int32_t> encode_impl(std::string_view text, bool add_bos, bool parse_special,
                                   bool space_prefix) const;
  void encode_fragment(std::string_view text, bool prefix, std::vector<int32_t>& out) const;
  void encode_word_ranks(std::string_view word, std::vector<int32_t>& out) const;
  void encode_word_scores(std::string_view word, std::vector<int32_t>& out) const;
  void emit_unknown(std::string_view text, std::vector<int32_t>& out) const;

  VocabData data_;
  VocabConfig config_;
  TokenMap token_ids_;
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;  // (a, b) → (rank, a+b)
  std::vector<int32_t> special_;  // matched whole in text, longest first
  int32_t byte_tokens_[256];
};

}  // namespace lockstep
