// runtime/pretokenizer.cpp — see pretokenizer.h.
#include "runtime/pretokenizer.h"

#include <stdexcept>

#include <fmt/format.h>
#include <re2/re2.h>

#include "grammar/utf8.h"
#include "grammar/unicode.h"

namespace lockstep {

struct RegexSplitter::Alternative {
  std::unique_ptr<re2::RE2> body;       // the alternative without its lookahead
  std::unique_ptr<re2::RE2> lookahead;  // B of a trailing (?!B), or null
};

namespace {

std::unique_ptr<re2::RE2> compile(const std::string& pattern, const std::string& source) {
  re2::RE2::Options opt;
  opt.set_log_errors(false);
  opt.set_max_mem(64 << 20);
  auto re = std::make_unique<re2::RE2>(pattern, opt);
  if (!re->ok()) {
    throw std::invalid_argument(fmt::format("pre-tokenizer pattern '{}': {}", source, re->error()));
  }
  return re;
}

// Rewrites \s and \S to the Unicode White_Space class for RE2.
std::string translate(std::string_view p, const std::string& source) {
  const std::string& ws = unicode::whitespace_class_body();
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char n = p[++i];
      if (n == 's') {
        out += in_class ? ws : "[" + ws + "]";
      } else if (n == 'S') {
        if (in_class) {
          throw std::invalid_argument(fmt::format("pre-tokenizer pattern '{}': \\S inside a "
                                                  "character class is not supported", source));
        }
        out += "[^" + ws + "]";
      } else {
        out += c;
        out += n;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];  // a leading ']' is literal
      continue;
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}

// Splits a pattern at its top-level '|'.
std::vector<std::string> top_level_alternatives(std::string_view p) {
  std::vector<std::string> alts(1);
  int depth = 0;
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      alts.back() += c;
      alts.back() += p[++i];
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
    } else if (c == '[') {
      in_class = true;
      alts.back() += c;
      if (i + 1 < p.size() && p[i + 1] == '^') alts.back() += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') alts.back() += p[++i];
      continue;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (c == '|' && depth == 0) {
      alts.emplace_back();
      continue;
    }
    alts.back() += c;
  }
  return alts;
}

size_t next_char(std::string_view text, size_t pos) {
  ++pos;
  while (pos < text.size() && (static_cast<uint8_t>(text[pos]) & 0xC0) == 0x80) ++pos;
  return pos;
}

size_t prev_char(std::string_view text, size_t pos) {
  --pos;
  while (pos > 0 && (static_cast<uint8_t>(text[pos]) & 0xC0) == 0x80) --pos;
  return pos;
}

}  // namespace

RegexSplitter::RegexSplitter(std::string_view pattern) : pattern_(pattern) {
  std::string search;
  for (const std::string& alt : top_level_alternatives(pattern)) {
    std::string body = alt;
    std::string lookahead;
    // A trailing "(?!B)" group: find where it opens.
    if (!body.empty() && body.back() == ')') {
      const size_t open = body.rfind("(?!");
      if (open != std::string::npos) {
        int depth = 0;
        size_t close = std::string::npos;
        for (size_t i = open; i < body.size(); ++i) {
          if (body[i] == '\\') {
            ++i;
            continue;
          }
          if (body[i] == '(') ++depth;
          if (body[i] == ')' && --depth == 0) {
            close = i;
            break;
          }
        }
        if (close == body.size() - 1) {
          lookahead = body.substr(open + 3, close - open - 3);
          body = body.substr(0, open);
        }
      }
    }
    for (const char* look : {"(?!", "(?=", "(?<=", "(?<!"}) {
      if (body.find(look) != std::string::npos || lookahead.find(look) != std::string::npos) {
        throw std::invalid_argument(fmt::format(
            "pre-tokenizer pattern '{}': lookaround '{}' is only supported as a trailing "
            "negative lookahead of a top-level alternative", pattern_, look));
      }
    }
    Alternative a;
    const std::string rbody = translate(body, pattern_);
    a.body = compile("(?:" + rbody + ")", pattern_);
    if (!lookahead.empty()) a.lookahead = compile("(?:" + translate(lookahead, pattern_) + ")", pattern_);
    if (!search.empty()) search += "|";
    search += "(?:" + rbody + ")";
    alternatives_.push_back(std::move(a));
  }
  search_ = compile(search, pattern_);
}

RegexSplitter::~RegexSplitter() = default;
RegexSplitter::RegexSplitter(RegexSplitter&&) noexcept = default;
RegexSplitter& RegexSplitter::operator=(RegexSplitter&&) noexcept = default;

long RegexSplitter::match_at(std::string_view text, size_t pos) const {
  const re2::StringPiece t(text.data(), text.size());
  re2::StringPiece m;
  for (const auto& a : alternatives_) {
    if (!a.body->Match(t, pos, text.size(), re2::RE2::ANCHOR_START, &m, 1)) continue;
    size_t end = pos + m.size();
    if (!a.lookahead) {
      if (end > pos) return static_cast<long>(end - pos);
      continue;
    }
    // Backtrack the end until the lookahead does not match there.
    while (end > pos) {
      const bool exact = a.body->Match(t, pos, end, re2::RE2::ANCHOR_BOTH, nullptr, 0);
      if (exact && !a.lookahead->Match(t, end, text.size(), re2::RE2::ANCHOR_START, nullptr, 0)) {
        return static_cast<long>(end - pos);
      }
      end = prev_char(text, end);
      if (end <= pos) break;
    }
  }
  return -1;
}

void RegexSplitter::split(std::string_view text, std::vector<std::string_view>& out) const {
  const re2::StringPiece t(text.data(), text.size());
  size_t pos = 0, gap = 0;
  while (pos < text.size()) {
    re2::StringPiece m;
    if (!search_->Match(t, pos, text.size(), re2::RE2::UNANCHORED, &m, 1)) break;
    size_t start = static_cast<size_t>(m.data() - text.data());
    long len = match_at(text, start);
    if (len <= 0) {
      // The lookahead-free search over-approximates: move on one character.
      pos = next_char(text, start);
      continue;
    }
    if (start > gap) out.push_back(text.substr(gap, start - gap));
    out.push_back(text.substr(start, static_cast<size_t>(len)));
    pos = gap = start + static_cast<size_t>(len);
  }
  if (gap < text.size()) out.push_back(text.substr(gap));
}

std::vector<std::string_view> split_all(const std::vector<RegexSplitter>& splitters,
                                        std::string_view text) {
  std::vector<std::string_view> pieces{text};
  std::vector<std::string_view> next;
  for (const auto& s : splitters) {
    next.clear();
    for (auto p : pieces) s.split(p, next);
    pieces.swap(next);
  }
  return pieces;
}

// ---------------------------------------------------------------------------------
// llama.cpp's pre-tokenizer patterns (src/llama-vocab.cpp), per tokenizer.ggml.pre.

std::vector<std::string> pretokenizer_patterns(std::string_view pre) {
  static const std::string kGpt2 =
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
  static const std::string kLlama3 =
      R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  static const std::string kQwen2 =
      R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  // Cased letters (Lu, Ll, Lt) of the scripts DeepSeek LLM's tokenizer treats as words.
  static const std::string kDeepseekLetters =
      R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293})"
      R"(\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A})"
      R"(\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556})"
      R"(\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF})"
      R"(\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D})"
      R"(\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D})"
      R"(\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3})"
      R"(\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107})"
      R"(\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D})"
      R"(\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184})"
      R"(\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D})"
      R"(\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF})"
      R"(\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F})"
      R"(\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2})"
      R"(\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)";
  static const std::string kCjk = R"([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";

  if (pre == "default") return {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"};
  if (pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe" || pre == "falcon3" ||
      pre == "pixtral") {
    return {kLlama3};
  }
  if (pre == "deepseek-llm") {
    return {"[\r\n]", kDeepseekLetters,
            R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)",
            R"(\s+$)", kCjk, R"(\p{N}+)"};
  }
  if (pre == "deepseek-coder") {
    return {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, R"(\p{N})"};
  }
  if (pre == "falcon") return {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"};
  if (pre == "mpt" || pre == "gpt-2" || pre == "olmo" || pre == "phi-2" || pre == "jina-es" ||
      pre == "jina-de" || pre == "roberta-bpe") {
    return {kGpt2};
  }
  if (pre == "starcoder" || pre == "refact" || pre == "command-r" || pre == "smollm" ||
      pre == "codeshell") {
    return {R"(\p{N})", kGpt2};
  }
  if (pre == "qwen2" || pre == "stablelm2" || pre == "deepseek-r1-qwen" || pre == "megrez") {
    return {kQwen2};
  }
  throw std::invalid_argument(fmt::format("pre-tokenizer '{}' is not supported", pre));
}

// ---------------------------------------------------------------------------------
// GPT-2 byte mapping

uint32_t byte_to_codepoint(uint8_t b) {
  if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE) return b;
  // The other 68 bytes, in increasing order, map to U+0100 onwards.
  uint32_t n = 0;
  for (uint32_t x = 0; x < b; ++x) {
    if (!((x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE)) ++n;
  }
  return 0x100 + n;
}

int codepoint_to_byte(uint32_t cp) {
  static const auto table = [] {
    std::vector<int> t(0x200, -1);
    for (int b = 0; b < 256; ++b) t[byte_to_codepoint(static_cast<uint8_t>(b))] = b;
    return t;
  }();
  return cp < table.size() ? table[cp] : -1;
}

std::string byte_level_encode(std::string_view bytes) {
  static const auto table = [] {
    std::vector<std::string> t(256);
    for (int b = 0; b < 256; ++b) t[b] = utf8::encode(byte_to_codepoint(static_cast<uint8_t>(b)));
    return t;
  }();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += table[static_cast<uint8_t>(c)];
  return out;
}

bool byte_level_decode(std::string_view mapped, std::string& out) {
  size_t pos = 0;
  while (pos < mapped.size()) {
    const uint32_t cp = utf8::decode(mapped, pos);
    const int b = cp == utf8::kInvalid ? -1 : codepoint_to_byte(cp);
    if (b < 0) return false;
    out.push_back(static_cast<char>(b));
  }
  return true;
}

}  // namespace lockstep
