// runtime/vocab_tokenizer.cpp — see vocab_tokenizer.h.
#include "runtime/vocab_tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <queue>
#include <stdexcept>

#include <fmt/format.h>

#include "grammar/unicode.h"

namespace lockstep {

namespace {

constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // U+2581

size_t utf8_len(uint8_t lead) {
  static constexpr size_t lengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return lengths[lead >> 4];
}

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t hit = s.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s.substr(pos));
  return out;
}

// Symbols of a word being merged: a doubly linked list over byte ranges of the word.
struct Symbol {
  int32_t prev, next;
  uint32_t start, len;
  int32_t id;  // token id of the symbol's text, or -1
};

}  // namespace

VocabTokenizer::VocabTokenizer(VocabData data, VocabConfig config)
    : data_(std::move(data)), config_(std::move(config)) {
  const size_t n = data_.tokens.size();
  if (data_.attrs.size() != n) throw std::invalid_argument("token attributes and tokens differ in count");
  if (config_.merge == VocabConfig::Merge::kScores && data_.scores.size() != n) {
    throw std::invalid_argument("token scores and tokens differ in count");
  }
  for (int32_t* id : {&config_.unk, &config_.bos, &config_.eos}) {
    if (*id >= static_cast<int32_t>(n)) *id = -1;
  }
  token_ids_.reserve(n);
  for (size_t id = 0; id < n; ++id) token_ids_.try_emplace(data_.tokens[id], static_cast<int32_t>(id));
  std::fill(std::begin(byte_tokens_), std::end(byte_tokens_), -1);
  for (int b = 0; b < 256; ++b) {
    if (auto it = token_ids_.find(fmt::format("<0x{:02X}>", b)); it != token_ids_.end()) {
      byte_tokens_[b] = it->second;
    }
  }
  for (size_t rank = 0; rank < data_.merges.size(); ++rank) {
    const auto& [a, b] = data_.merges[rank];
    const int32_t ia = find(a), ib = find(b), iab = find(a + b);
    if (ia < 0 || ib < 0 || iab < 0) continue;
    const uint64_t key = (static_cast<uint64_t>(ia) << 32) | static_cast<uint32_t>(ib);
    merges_.try_emplace(key, static_cast<int32_t>(rank), iab);  // the first rank wins
  }
  for (size_t id = 0; id < n; ++id) {
    const TokenAttr a = data_.attrs[id];
    if ((a == TokenAttr::kControl || a == TokenAttr::kUserDefined || a == TokenAttr::kUnknown) &&
        !data_.tokens[id].empty()) {
      special_.push_back(static_cast<int32_t>(id));
    }
  }
  std::stable_sort(special_.begin(), special_.end(), [&](int32_t x, int32_t y) {
    return data_.tokens[x].size() > data_.tokens[y].size();
  });

  // The grammar engine's view: exact output bytes per token.
  std::vector<std::string> bytes(n);
  std::vector<TokenKind> kinds(n, TokenKind::kText);
  for (size_t id = 0; id < n; ++id) {
    const std::string& t = data_.tokens[id];
    switch (data_.attrs[id]) {
      case TokenAttr::kUserDefined:
        bytes[id] = t;
        break;
      case TokenAttr::kByte: {
        unsigned b = 0;
        if (t.size() == 6 && std::sscanf(t.c_str(), "<0x%02X>", &b) == 1) {
          bytes[id] = std::string(1, static_cast<char>(b));
        } else {
          kinds[id] = TokenKind::kControl;
        }
        break;
      }
      case TokenAttr::kNormal:
        if (config_.byte_level) {
          if (!byte_level_decode(t, bytes[id])) {
            bytes[id].clear();
            kinds[id] = TokenKind::kControl;  // not a byte string: can never be output text
          }
        } else {
          bytes[id] = config_.metaspace ? replace_all(t, kMetaspace, " ") : t;
        }
        break;
      default:
        kinds[id] = TokenKind::kControl;
        break;
    }
  }
  bos_ = config_.bos;
  eos_ = config_.eos;
  std::vector<int32_t> eog = config_.eog;
  if (config_.eos >= 0) eog.push_back(config_.eos);
  std::erase_if(eog, [&](int32_t id) { return id < 0 || static_cast<size_t>(id) >= n; });
  vocab_ = std::make_shared<Vocabulary>(std::move(bytes), std::move(kinds), std::move(eog));
}

int32_t VocabTokenizer::find(std::string_view text) const {
  auto it = token_ids_.find(text);
  return it == token_ids_.end() ? -1 : it->second;
}

std::string VocabTokenizer::token_name(int32_t id) const {
  return data_.tokens[static_cast<size_t>(id)];
}

std::vector<int32_t> VocabTokenizer::encode(std::string_view text, bool add_bos) const {
  return encode(text, add_bos, false);
}

std::vector<int32_t> VocabTokenizer::encode(std::string_view text, bool add_bos,
                                            bool parse_special) const {
  return encode_impl(text, add_bos, parse_special, config_.add_space_prefix);
}

std::vector<int32_t> VocabTokenizer::encode_continuation(std::string_view text) const {
  return encode_impl(text, false, false, false);
}

std::vector<int32_t> VocabTokenizer::encode_impl(std::string_view text, bool add_bos,
                                                 bool parse_special, bool space_prefix) const {
  std::vector<int32_t> out;
  if (add_bos && config_.bos >= 0) out.push_back(config_.bos);
  // Split out special tokens: each candidate, longest first, cuts every remaining text
  // fragment at its leftmost non-overlapping occurrences (llama.cpp's partition order).
  struct Fragment {
    std::string_view text;
    int32_t token;  // -1 for text
  };
  std::vector<Fragment> frags{{text, -1}};
  for (int32_t id : special_) {
    const TokenAttr a = data_.attrs[id];
    if (!parse_special && a != TokenAttr::kUserDefined) continue;
    const std::string& s = data_.tokens[id];
    std::vector<Fragment> next;
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      size_t pos = 0;
      while (true) {
        const size_t hit = f.text.find(s, pos);
        if (hit == std::string_view::npos) break;
        if (hit > pos) next.push_back({f.text.substr(pos, hit - pos), -1});
        next.push_back({{}, id});
        pos = hit + s.size();
      }
      if (pos < f.text.size()) next.push_back({f.text.substr(pos), -1});
    }
    frags.swap(next);
  }
  bool after_special = true;  // the start of the text counts as a boundary
  for (const Fragment& f : frags) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    encode_fragment(f.text, space_prefix && after_special, out);
    after_special = false;
  }
  return out;
}

void VocabTokenizer::encode_fragment(std::string_view raw, bool prefix, std::vector<int32_t>& out) const {
  if (raw.empty()) return;
  std::string text = config_.nfc ? unicode::nfc(raw) : std::string(raw);
  if (prefix) text.insert(text.begin(), ' ');
  if (config_.metaspace) text = replace_all(text, " ", kMetaspace);
  std::vector<std::string_view> words;
  if (config_.splitters.empty()) {
    words.push_back(text);
  } else {
    words = split_all(config_.splitters, text);
  }
  std::string mapped;
  for (std::string_view w : words) {
    if (config_.byte_level) {
      mapped = byte_level_encode(w);
      w = mapped;
    }
    if (config_.merge == VocabConfig::Merge::kRanks) {
      encode_word_ranks(w, out);
    } else {
      encode_word_scores(w, out);
    }
  }
}

void VocabTokenizer::emit_unknown(std::string_view text, std::vector<int32_t>& out) const {
  if (config_.byte_fallback) {
    for (char c : text) {
      const int32_t b = byte_tokens_[static_cast<uint8_t>(c)];
      if (b >= 0) {
        out.push_back(b);
      } else if (config_.unk >= 0) {
        out.push_back(config_.unk);
      }
    }
    return;
  }
  if (config_.byte_level) {
    // llama.cpp: each byte of the mapped text that is a token by itself.
    for (char c : text) {
      const int32_t id = find(std::string_view(&c, 1));
      if (id >= 0) out.push_back(id);
    }
    return;
  }
  if (config_.unk >= 0) out.push_back(config_.unk);
}

void VocabTokenizer::encode_word_ranks(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (config_.ignore_merges) {
    if (const int32_t id = find(word); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  std::vector<Symbol> sym;
  for (uint32_t pos = 0; pos < word.size();) {
    const uint32_t len = static_cast<uint32_t>(
        std::min<size_t>(utf8_len(static_cast<uint8_t>(word[pos])), word.size() - pos));
    const int32_t idx = static_cast<int32_t>(sym.size());
    sym.push_back({idx - 1, idx + 1, pos, len, find(word.substr(pos, len))});
    pos += len;
  }
  sym.back().next = -1;
  struct Pair {
    int32_t rank, left, right_id, left_id;
    bool operator>(const Pair& o) const { return rank > o.rank || (rank == o.rank && left > o.left); }
  };
  std::priority_queue<Pair, std::vector<Pair>, std::greater<Pair>> queue;
  auto try_pair = [&](int32_t left) {
    if (left < 0) return;
    const int32_t right = sym[left].next;
    if (right < 0 || sym[left].id < 0 || sym[right].id < 0) return;
    const uint64_t key = (static_cast<uint64_t>(sym[left].id) << 32) | static_cast<uint32_t>(sym[right].id);
    if (auto it = merges_.find(key); it != merges_.end()) {
      queue.push({it->second.first, left, sym[right].id, sym[left].id});
    }
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(sym.size()); ++i) try_pair(i);
  while (!queue.empty()) {
    const Pair p = queue.top();
    queue.pop();
    Symbol& l = sym[p.left];
    if (l.len == 0 || l.next < 0 || l.id != p.left_id || sym[l.next].id != p.right_id) continue;
    Symbol& r = sym[l.next];
    const uint64_t key = (static_cast<uint64_t>(l.id) << 32) | static_cast<uint32_t>(r.id);
    l.id = merges_.at(key).second;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = p.left;
    try_pair(l.prev);
    try_pair(p.left);
  }
  for (int32_t i = 0; i >= 0; i = sym[i].next) {
    if (sym[i].id >= 0) {
      out.push_back(sym[i].id);
    } else {
      emit_unknown(word.substr(sym[i].start, sym[i].len), out);
    }
  }
}

void VocabTokenizer::encode_word_scores(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  std::vector<Symbol> sym;
  for (uint32_t pos = 0; pos < word.size();) {
    const uint32_t len = static_cast<uint32_t>(
        std::min<size_t>(utf8_len(static_cast<uint8_t>(word[pos])), word.size() - pos));
    const int32_t idx = static_cast<int32_t>(sym.size());
    sym.push_back({idx - 1, idx + 1, pos, len, -1});
    pos += len;
  }
  sym.back().next = -1;
  struct Bigram {
    float score;
    int32_t left, right;
    uint32_t size;
    bool operator<(const Bigram& o) const {  // max-heap: best score, then leftmost
      return score < o.score || (score == o.score && left > o.left);
    }
  };
  std::priority_queue<Bigram> queue;
  // Merged text → the two symbols it came from, for resegmenting unknown pieces.
  std::unordered_map<std::string_view, std::pair<int32_t, int32_t>> rev;
  auto try_bigram = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const std::string_view text = word.substr(sym[left].start, sym[left].len + sym[right].len);
    const int32_t id = find(text);
    if (id < 0) return;
    queue.push({data_.scores[id], left, right, static_cast<uint32_t>(text.size())});
    rev[text] = {left, right};
  };
  for (int32_t i = 1; i < static_cast<int32_t>(sym.size()); ++i) try_bigram(i - 1, i);
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = sym[b.left];
    Symbol& r = sym[b.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.size) continue;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_bigram(l.prev, b.left);
    try_bigram(b.left, l.next);
  }
  // Resegment: a symbol that is not a token splits back into its halves, down to bytes.
  std::vector<std::string_view> stack;
  for (int32_t i = 0; i >= 0; i = sym[i].next) {
    stack.push_back(word.substr(sym[i].start, sym[i].len));
    while (!stack.empty()) {
      const std::string_view t = stack.back();
      stack.pop_back();
      if (const int32_t id = find(t); id >= 0) {
        out.push_back(id);
        continue;
      }
      auto it = rev.find(t);
      if (it != rev.end()) {
        const Symbol& a = sym[it->second.first];
        const size_t split = static_cast<size_t>(sym[it->second.second].start - a.start);
        stack.push_back(t.substr(split));
        stack.push_back(t.substr(0, split));
        continue;
      }
      emit_unknown(t, out);
    }
  }
}

std::string VocabTokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  bool first_text = true;
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= size() || vocabulary().is_control(id)) continue;
    std::string_view piece = token_bytes(id);
    if (first_text && config_.decode_strips_prefix && !piece.empty() && piece[0] == ' ') {
      piece.remove_prefix(1);
    }
    first_text = false;
    out += piece;
  }
  return out;
}

}  // namespace lockstep
