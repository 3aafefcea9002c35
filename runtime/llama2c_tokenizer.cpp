// runtime/llama2c_tokenizer.cpp — llama2.c's tokenizer.bin (SentencePiece BPE by score).
#include <array>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "runtime/errors.h"
#include "runtime/mapped_file.h"
#include "runtime/tokenizer.h"

namespace lockstep {

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  // SentencePiece drops the dummy-prefix space of the first piece of a sequence (the first
  // text token, right after BOS or at the start).
  std::string out;
  bool first = true;
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= size() || vocab_->is_control(id)) continue;
    std::string_view piece = token_bytes(id);
    if (first && strips_space_after_bos() && !piece.empty() && piece[0] == ' ') {
      piece.remove_prefix(1);
    }
    first = false;
    out += piece;
  }
  return out;
}

std::string Tokenizer::token_name(int32_t id) const { return std::string(token_bytes(id)); }

namespace {

// The byte of a byte-fallback piece "<0xHH>" (two hex digits, either case), else -1 ("<0x-D>"
// is text: scanf's %X would read it as a negative number).
int byte_piece(const std::string& p) {
  if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>') return -1;
  auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  const int hi = hex(p[3]), lo = hex(p[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

class Llama2cTokenizer : public Tokenizer {
 public:
  Llama2cTokenizer(std::vector<std::string> pieces, std::vector<float> scores)
      : pieces_(std::move(pieces)), scores_(std::move(scores)) {
    byte_token_.fill(-1);
    std::vector<std::string> bytes(pieces_.size());
    std::vector<TokenKind> kinds(pieces_.size(), TokenKind::kText);
    for (size_t id = 0; id < pieces_.size(); ++id) {
      const std::string& p = pieces_[id];
      lookup_.emplace(p, static_cast<int32_t>(id));
      if (const int byte = byte_piece(p); byte >= 0) {
        bytes[id] = std::string(1, static_cast<char>(byte));
        byte_token_[static_cast<size_t>(byte)] = static_cast<int32_t>(id);
      } else {
        bytes[id] = p;
      }
    }
    for (int32_t id = 0; id < 3 && static_cast<size_t>(id) < pieces_.size(); ++id) {
      kinds[id] = TokenKind::kControl;
    }
    bos_ = pieces_.size() > 1 ? 1 : -1;
    eos_ = pieces_.size() > 2 ? 2 : -1;
    std::vector<int32_t> eog;
    if (bos_ >= 0) eog.push_back(bos_);
    if (eos_ >= 0) eog.push_back(eos_);
    vocab_ = std::make_shared<Vocabulary>(std::move(bytes), std::move(kinds), std::move(eog));
  }

  bool strips_space_after_bos() const override { return true; }

  std::string token_name(int32_t id) const override {
    if (id == 0) return "<unk>";
    if (id == bos_) return "<s>";
    if (id == eos_) return "</s>";
    return pieces_[static_cast<size_t>(id)];
  }

  std::vector<int32_t> encode(std::string_view text, bool add_bos) const override {
    return encode_impl(text, add_bos, true);
  }
  std::vector<int32_t> encode_continuation(std::string_view text) const override {
    return encode_impl(text, false, false);
  }

 private:
  std::vector<int32_t> encode_impl(std::string_view text, bool add_bos, bool dummy_prefix) const {
    std::vector<int32_t> ids;
    if (add_bos && bos_ >= 0) ids.push_back(bos_);
    if (text.empty()) return ids;
    std::vector<int32_t> work;
    // SentencePiece's dummy prefix: a space in front of the text.
    if (auto it = lookup_.find(" "); dummy_prefix && it != lookup_.end()) work.push_back(it->second);
    // One token per UTF-8 character, or its bytes when the vocabulary lacks it.
    for (size_t i = 0; i < text.size();) {
      size_t len = 1;
      while (i + len < text.size() && len < 4 && (static_cast<uint8_t>(text[i + len]) & 0xC0) == 0x80) {
        ++len;
      }
      auto it = lookup_.find(std::string(text.substr(i, len)));
      if (it != lookup_.end()) {
        work.push_back(it->second);
      } else {
        for (size_t k = 0; k < len; ++k) {
          const int32_t b = byte_token_[static_cast<uint8_t>(text[i + k])];
          work.push_back(b >= 0 ? b : 0);
        }
      }
      i += len;
    }
    // Merge the adjacent pair with the best score until none is in the vocabulary.
    std::string merged;
    for (;;) {
      float best_score = -1e10f;
      int32_t best_id = -1;
      size_t best_at = 0;
      for (size_t i = 0; i + 1 < work.size(); ++i) {
        merged = pieces_[work[i]];
        merged += pieces_[work[i + 1]];
        auto it = lookup_.find(merged);
        if (it != lookup_.end() && scores_[it->second] > best_score) {
          best_score = scores_[it->second];
          best_id = it->second;
          best_at = i;
        }
      }
      if (best_id < 0) break;
      work[best_at] = best_id;
      work.erase(work.begin() + static_cast<ptrdiff_t>(best_at) + 1);
    }
    ids.insert(ids.end(), work.begin(), work.end());
    return ids;
  }

  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::unordered_map<std::string, int32_t> lookup_;
  std::array<int32_t, 256> byte_token_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_llama2c_tokenizer(const std::string& path, int32_t vocab_size) {
  Llama2cVocab v = read_llama2c_vocab(path, vocab_size);
  return std::make_unique<Llama2cTokenizer>(std::move(v.pieces), std::move(v.scores));
}

Llama2cVocab read_llama2c_vocab(const std::string& path, int32_t vocab_size) {
  MappedFile file(path);
  const uint8_t* p = file.data();
  const size_t n = file.size();
  size_t off = 0;
  auto read_i32 = [&](const char* what) {
    if (off + 4 > n) {
      throw TokenizerError(path, off, fmt::format("file ends where {} was expected", what));
    }
    int32_t v;
    std::memcpy(&v, p + off, 4);
    off += 4;
    return v;
  };
  const int32_t max_len = read_i32("the maximum token length (int32)");
  if (max_len <= 0 || max_len > 1024) {
    throw TokenizerError(path, 0, fmt::format("maximum token length {} is not plausible: not a "
                                              "llama2.c tokenizer.bin?", max_len));
  }
  std::vector<std::string> pieces;
  std::vector<float> scores;
  while (vocab_size < 0 ? off < n : static_cast<int32_t>(pieces.size()) < vocab_size) {
    const size_t at = off;
    float score;
    if (off + 4 > n) {
      throw TokenizerError(path, off, fmt::format("file ends after {} tokens; the model expects {}",
                                                  pieces.size(), vocab_size));
    }
    std::memcpy(&score, p + off, 4);
    off += 4;
    const int32_t len = read_i32("a token length (int32)");
    if (len < 0 || len > max_len) {
      throw TokenizerError(path, at + 4, fmt::format("token {} has length {} (maximum {})",
                                                     pieces.size(), len, max_len));
    }
    if (off + static_cast<size_t>(len) > n) {
      throw TokenizerError(path, off, fmt::format("token {} is cut off by the end of the file",
                                                  pieces.size()));
    }
    pieces.emplace_back(reinterpret_cast<const char*>(p + off), static_cast<size_t>(len));
    scores.push_back(score);
    off += static_cast<size_t>(len);
  }
  if (pieces.size() < 3) throw TokenizerError(path, off, "fewer than 3 tokens");
  return {std::move(pieces), std::move(scores)};
}

}  // namespace lockstep
