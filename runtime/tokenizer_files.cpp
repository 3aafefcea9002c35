// runtime/tokenizer_files.cpp — tokenizer.json (HF tokenizers), GPT-2 encoder.json +
// vocab.bpe, and GGUF vocabularies, all loaded into a VocabTokenizer.
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "grammar/limits.h"
#include "runtime/errors.h"
#include "runtime/gguf.h"
#include "runtime/mapped_file.h"
#include "runtime/vocab_tokenizer.h"

namespace lockstep {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Texts llama.cpp treats as end of generation (llama-vocab.cpp).
const std::set<std::string>& eog_texts() {
  static const std::set<std::string> s = {
      "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "</s>",
      "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>",
      "<eos>", "<|return|>", "<|call|>"};
  return s;
}

// GPT-2's pre-tokenizer as HF's ByteLevel(use_regex = true) applies it.
constexpr const char* kHfByteLevelPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Limits that keep a hostile tokenizer file from allocating memory out of proportion to its
// size (they will move into a central EngineLimits):
// - token ids are below max_vocab_size(): real vocabularies reach ~262k ids (Gemma 3), so
//   2^21 = 2,097,152 leaves room and bounds the id table at a few tens of MB;
// - ids are dense: max id + 1 <= 2 × (number of entries) + kMaxVocabHoles, so the id table
//   (one string and one attribute per id) stays proportional to the file;
// - a tokenizer file read whole (tokenizer.json, encoder.json, vocab.bpe) is at most
//   kMaxTokenizerFileBytes (real ones are under 40 MB);
// - normalizer / pre-tokenizer Sequences nest at most kMaxTokenizerNesting deep.
constexpr int64_t kMaxVocabHoles = 1024;
int64_t max_vocab_size() { return static_cast<int64_t>(engine_limits().vocab_size); }
constexpr size_t kMaxTokenizerFileBytes = size_t{128} << 20;
constexpr int kMaxTokenizerNesting = 16;

json parse_json_file(const std::string& path) {
  const std::string text = read_file(path, kMaxTokenizerFileBytes);
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw TokenizerError(path, fmt::format("byte offset {}", e.byte), "malformed JSON");
  }
}

std::string pointer_text(const json::json_pointer& where) {
  return "at " + (where.empty() ? std::string("/") : where.to_string());
}

[[noreturn]] void fail_at(const std::string& path, const json::json_pointer& where,
                          const std::string& message) {
  throw TokenizerError(path, pointer_text(where), message);
}

const json& need(const std::string& path, const json& j, const json::json_pointer& ptr,
                 json::value_t type, const char* what) {
  if (!j.contains(ptr)) fail_at(path, ptr, fmt::format("missing {}", what));
  const json& v = j.at(ptr);
  if (v.type() != type && !(type == json::value_t::number_integer && v.is_number_integer())) {
    fail_at(path, ptr, fmt::format("{} has the wrong type ({})", what, v.type_name()));
  }
  return v;
}

// Type-checked access to the members of the object `obj` found at `at` in `path`: every
// wrong type is a TokenizerError with its JSON pointer, never a library exception.
struct Fields {
  const std::string& path;
  const json& obj;
  json::json_pointer at;

  Fields(const std::string& p, const json& o, json::json_pointer a) : path(p), obj(o), at(std::move(a)) {
    if (!obj.is_object()) fail_at(path, at, fmt::format("expected an object, found {}", obj.type_name()));
  }
  // The member, or null when absent or JSON null.
  const json* find(const char* key) const {
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }
  const json& typed(const char* key, bool ok, const char* type) const {
    const json& v = *find(key);
    if (!ok) fail_at(path, at / key, fmt::format("expected {}, found {}", type, v.type_name()));
    return v;
  }
  std::string str(const char* key, const std::string& fallback = "") const {
    const json* v = find(key);
    return v ? typed(key, v->is_string(), "a string").get<std::string>() : fallback;
  }
  bool boolean(const char* key, bool fallback) const {
    const json* v = find(key);
    return v ? typed(key, v->is_boolean(), "a boolean").get<bool>() : fallback;
  }
  // An array member (empty when absent).
  const json& array(const char* key) const {
    static const json empty = json::array();
    const json* v = find(key);
    return v ? typed(key, v->is_array(), "an array") : empty;
  }
  // An object member, or null when absent.
  const json* object(const char* key) const {
    const json* v = find(key);
    return v ? &typed(key, v->is_object(), "an object") : nullptr;
  }
};

std::string token_content(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"];
  return "";
}

// Checks the id of a vocabulary entry at `at`: an integer in [0, max_vocab_size()).
int64_t checked_id(const std::string& path, const json& id, const json::json_pointer& at) {
  if (!id.is_number_integer()) {
    fail_at(path, at, fmt::format("a token id must be a non-negative integer, found {}", id.type_name()));
  }
  const int64_t v = id.is_number_unsigned() && id.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                        ? INT64_MAX
                        : id.get<int64_t>();
  if (v < 0 || v >= max_vocab_size()) {
    fail_at(path, at, fmt::format("token id {} is outside 0..{} (lockstep's maximum vocabulary size is {})",
                                  id.dump(), max_vocab_size() - 1, max_vocab_size()));
  }
  return v;
}

// Checks that `entries` ids up to `max_id` leave few holes (see kMaxVocabHoles).
void check_dense(const std::string& path, int64_t max_id, size_t entries, const json::json_pointer& at) {
  const int64_t allowed = 2 * static_cast<int64_t>(entries) + kMaxVocabHoles;
  if (max_id + 1 > allowed) {
    fail_at(path, at, fmt::format("token id {} leaves the vocabulary mostly holes: {} entries may use ids up to {} "
                                  "(2 × entries + {})", max_id, entries, allowed - 1, kMaxVocabHoles));
  }
}

std::unique_ptr<Tokenizer> load_hf_tokenizer_json(const std::string& path, const json& j, bool config_beside) {
  using ptr = json::json_pointer;
  if (!j.is_object()) fail_at(path, ptr(""), "a tokenizer.json is a JSON object");
  const json& model = need(path, j, ptr("/model"), json::value_t::object, "the model");
  const Fields mf(path, model, ptr("/model"));
  const std::string type = mf.str("type");
  if (type != "BPE") {
    fail_at(path, ptr("/model/type"), fmt::format("model type '{}' is not supported (lockstep reads "
                                                  "BPE tokenizers)", type));
  }
  const json& vocab = need(path, j, ptr("/model/vocab"), json::value_t::object, "the vocabulary");
  VocabData data;
  VocabConfig cfg;
  int64_t max_id = -1;
  ptr max_at;
  for (const auto& [text, id] : vocab.items()) {
    const ptr at = ptr("/model/vocab") / text;
    if (const int64_t v = checked_id(path, id, at); v > max_id) max_id = v, max_at = at;
  }
  const json& added = Fields(path, j, ptr("")).array("added_tokens");
  for (size_t i = 0; i < added.size(); ++i) {
    const json& a = added[i];
    const ptr at = ptr("/added_tokens") / i;
    if (!a.is_object() || !a.contains("id") || !a.contains("content") || !a["content"].is_string()) {
      fail_at(path, at, "an added token needs an integer id and a string content");
    }
    if (const int64_t v = checked_id(path, a["id"], at / "id"); v > max_id) max_id = v, max_at = at / "id";
    Fields(path, a, at).boolean("special", false);  // type-checked here, read below
  }
  check_dense(path, max_id, vocab.size() + added.size(), max_at);
  const size_t n = static_cast<size_t>(max_id + 1);
  data.tokens.assign(n, "");
  data.attrs.assign(n, TokenAttr::kUnused);
  for (const auto& [text, id] : vocab.items()) {
    data.tokens[id.get<size_t>()] = text;
    data.attrs[id.get<size_t>()] = TokenAttr::kNormal;
  }
  for (const json& a : added) {
    const size_t id = a["id"].get<size_t>();
    data.tokens[id] = a["content"].get<std::string>();
    data.attrs[id] = a.value("special", false) ? TokenAttr::kControl : TokenAttr::kUserDefined;
  }
  const json& merges = need(path, j, ptr("/model/merges"), json::value_t::array, "the merges");
  data.merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const json& m = merges[i];
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const size_t sp = s.find(' ', 1);
      if (sp == std::string::npos) fail_at(path, ptr("/model/merges") / i, "a merge is \"left right\"");
      data.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1));
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      data.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else {
      fail_at(path, ptr("/model/merges") / i, "a merge is \"left right\" or [left, right]");
    }
  }
  cfg.merge = VocabConfig::Merge::kRanks;
  cfg.byte_fallback = mf.boolean("byte_fallback", false);
  cfg.ignore_merges = mf.boolean("ignore_merges", false);
  if (const json* unk = mf.find("unk_token"); unk && unk->is_string()) {
    if (auto it = vocab.find(unk->get<std::string>()); it != vocab.end()) {
      cfg.unk = it->get<int32_t>();
      data.attrs[cfg.unk] = TokenAttr::kUnknown;
    }
  }
  if (cfg.byte_fallback) {
    for (size_t id = 0; id < n; ++id) {
      const std::string& t = data.tokens[id];
      if (data.attrs[id] == TokenAttr::kNormal && t.size() == 6 && t.rfind("<0x", 0) == 0 && t.back() == '>') {
        data.attrs[id] = TokenAttr::kByte;
      }
    }
  }

  // normalizer: none, NFC, or SentencePiece's Prepend("▁") + Replace(" ", "▁").
  std::function<void(const json&, const ptr&, int)> normalizer = [&](const json& nz, const ptr& at, int depth) {
    if (nz.is_null()) return;
    if (depth > kMaxTokenizerNesting) fail_at(path, at, fmt::format("nested more than {} deep", kMaxTokenizerNesting));
    const Fields f(path, nz, at);
    const std::string t = f.str("type");
    if (t == "NFC") {
      cfg.nfc = true;
    } else if (t == "Sequence") {
      const json& list = f.array("normalizers");
      for (size_t i = 0; i < list.size(); ++i) normalizer(list[i], at / "normalizers" / i, depth + 1);
    } else if (t == "Prepend" && f.str("prepend") == "\xE2\x96\x81") {
      cfg.add_space_prefix = true;
      cfg.metaspace = true;
    } else if (const json* pattern = t == "Replace" ? f.object("pattern") : nullptr;
               pattern && Fields(path, *pattern, at / "pattern").str("String") == " " && f.str("content") == "\xE2\x96\x81") {
      cfg.metaspace = true;
    } else {
      fail_at(path, at, fmt::format("normalizer '{}' is not supported", t));
    }
  };
  // (No copies of the input's values: copying a deeply nested value recurses.)
  const Fields top(path, j, ptr(""));
  if (const json* nz = top.find("normalizer")) normalizer(*nz, ptr("/normalizer"), 0);

  std::function<void(const json&, const ptr&, int)> pre = [&](const json& pt, const ptr& at, int depth) {
    if (pt.is_null()) return;
    if (depth > kMaxTokenizerNesting) fail_at(path, at, fmt::format("nested more than {} deep", kMaxTokenizerNesting));
    const Fields f(path, pt, at);
    const std::string t = f.str("type");
    if (t == "Sequence") {
      const json& list = f.array("pretokenizers");
      for (size_t i = 0; i < list.size(); ++i) pre(list[i], at / "pretokenizers" / i, depth + 1);
    } else if (t == "Split") {
      const json* pattern = f.object("pattern");
      const json* regex = pattern ? Fields(path, *pattern, at / "pattern").find("Regex") : nullptr;
      if (!regex || f.boolean("invert", false) || f.str("behavior") != "Isolated") {
        fail_at(path, at, "only Split with a Regex pattern, behavior Isolated, invert false is supported");
      }
      const std::string re = Fields(path, *pattern, at / "pattern").str("Regex");
      try {
        cfg.splitters.emplace_back(re);
      } catch (const std::invalid_argument& e) {
        fail_at(path, at / "pattern" / "Regex", e.what());
      }
    } else if (t == "ByteLevel") {
      cfg.byte_level = true;
      if (f.boolean("add_prefix_space", false)) cfg.add_space_prefix = true;
      if (f.boolean("use_regex", true)) cfg.splitters.emplace_back(kHfByteLevelPattern);
    } else if (t == "Metaspace") {
      cfg.metaspace = true;
      const std::string scheme = f.str("prepend_scheme", f.boolean("add_prefix_space", true) ? "always" : "never");
      cfg.add_space_prefix = scheme != "never";
    } else {
      fail_at(path, at, fmt::format("pre-tokenizer '{}' is not supported", t));
    }
  };
  if (const json* pt = top.find("pre_tokenizer")) pre(*pt, ptr("/pre_tokenizer"), 0);
  cfg.decode_strips_prefix = cfg.add_space_prefix && cfg.metaspace;

  // BOS / EOS: tokenizer_config.json beside the file, else the post-processor template.
  auto id_of = [&](const std::string& content) -> int32_t {
    for (size_t id = 0; id < n; ++id) {
      if (data.tokens[id] == content && data.attrs[id] != TokenAttr::kNormal) return static_cast<int32_t>(id);
    }
    if (auto it = vocab.find(content); it != vocab.end()) return it->get<int32_t>();
    return -1;
  };
  const fs::path config_path = fs::path(path).parent_path() / "tokenizer_config.json";
  bool add_bos_known = false;
  if (config_beside && fs::is_regular_file(config_path)) {
    const std::string cpath = config_path.string();
    const json c = parse_json_file(cpath);
    const Fields cf(cpath, c, ptr(""));
    if (const json* b = cf.find("bos_token")) cfg.bos = id_of(token_content(*b));
    if (const json* e = cf.find("eos_token")) cfg.eos = id_of(token_content(*e));
    if (const json* a = cf.find("add_bos_token"); a && a->is_boolean()) {
      cfg.add_bos = a->get<bool>();
      add_bos_known = true;
    }
  }
  if (const json* pp = top.find("post_processor");
      pp && pp->is_object() && Fields(path, *pp, ptr("/post_processor")).str("type") == "TemplateProcessing") {
    const json& single = Fields(path, *pp, ptr("/post_processor")).array("single");
    if (!single.empty() && single[0].is_object()) {
      const ptr at = ptr("/post_processor/single/0");
      if (const json* st = Fields(path, single[0], at).object("SpecialToken")) {
        const int32_t bos = id_of(Fields(path, *st, at / "SpecialToken").str("id"));
        if (bos >= 0) {
          if (cfg.bos < 0) cfg.bos = bos;
          if (!add_bos_known) cfg.add_bos = true;
        }
      }
    }
  }
  for (size_t id = 0; id < n; ++id) {
    if (data.attrs[id] == TokenAttr::kControl && eog_texts().count(data.tokens[id])) {
      cfg.eog.push_back(static_cast<int32_t>(id));
    }
  }
  try {
    return std::make_unique<VocabTokenizer>(std::move(data), std::move(cfg));
  } catch (const std::invalid_argument& e) {
    throw TokenizerError(path, "", e.what());
  }
}

}  // namespace

std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path) {
  const json j = parse_json_file(path);
  try {
    return load_hf_tokenizer_json(path, j, true);
  } catch (const json::exception& e) {
    // A shape the checks above missed: still an error naming the file, not a library one.
    throw TokenizerError(path, "", fmt::format("unexpected JSON structure ({})", e.what()));
  }
}

std::unique_ptr<Tokenizer> load_hf_tokenizer_text(std::string_view text, const std::string& name) {
  if (text.size() > kMaxTokenizerFileBytes) {
    throw TokenizerError(name, "", fmt::format("{} bytes is more than the {} a tokenizer.json may have", text.size(),
                                               kMaxTokenizerFileBytes));
  }
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw TokenizerError(name, fmt::format("byte offset {}", e.byte), "malformed JSON");
  }
  try {
    return load_hf_tokenizer_json(name, j, false);
  } catch (const json::exception& e) {
    throw TokenizerError(name, "", fmt::format("unexpected JSON structure ({})", e.what()));
  }
}

std::unique_ptr<Tokenizer> load_gpt2_tokenizer(const std::string& encoder_json, const std::string& vocab_bpe) {
  const json enc = parse_json_file(encoder_json);
  if (!enc.is_object()) fail_at(encoder_json, json::json_pointer(""), "encoder.json maps token → id");
  VocabData data;
  VocabConfig cfg;
  int64_t max_id = -1;
  json::json_pointer max_at;
  for (const auto& [text, id] : enc.items()) {
    const json::json_pointer at = json::json_pointer("") / text;
    if (const int64_t v = checked_id(encoder_json, id, at); v > max_id) max_id = v, max_at = at;
  }
  check_dense(encoder_json, max_id, enc.size(), max_at);
  const size_t n = static_cast<size_t>(max_id + 1);
  data.tokens.assign(n, "");
  data.attrs.assign(n, TokenAttr::kUnused);
  for (const auto& [text, id] : enc.items()) {
    data.tokens[id.get<size_t>()] = text;
    data.attrs[id.get<size_t>()] = text == "<|endoftext|>" ? TokenAttr::kControl : TokenAttr::kNormal;
  }
  const std::string bpe = read_file(vocab_bpe, kMaxTokenizerFileBytes);
  size_t pos = 0, line_no = 0;
  while (pos < bpe.size()) {
    size_t end = bpe.find('\n', pos);
    if (end == std::string::npos) end = bpe.size();
    std::string_view line(bpe.data() + pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    if (!line.empty() && !(line_no == 1 && line.rfind("#version", 0) == 0)) {
      const size_t sp = line.find(' ', 1);
      if (sp == std::string_view::npos) {
        throw TokenizerError(vocab_bpe, fmt::format("byte offset {}", pos), "a merge line is \"left right\"");
      }
      data.merges.emplace_back(std::string(line.substr(0, sp)), std::string(line.substr(sp + 1)));
    }
    pos = end + 1;
  }
  cfg.byte_level = true;
  cfg.splitters.emplace_back(kHfByteLevelPattern);
  if (auto it = enc.find("<|endoftext|>"); it != enc.end()) {
    cfg.bos = cfg.eos = it->get<int32_t>();
  }
  try {
    return std::make_unique<VocabTokenizer>(std::move(data), std::move(cfg));
  } catch (const std::invalid_argument& e) {
    throw TokenizerError(encoder_json, "", e.what());
  }
}

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& f) {
  const std::string model = f.get_string("tokenizer.ggml.model");
  VocabData data;
  VocabConfig cfg;
  data.tokens = f.get_string_array("tokenizer.ggml.tokens");
  const size_t n = data.tokens.size();
  if (n > static_cast<size_t>(max_vocab_size())) {
    throw ModelFormatError(f.path(), f.find("tokenizer.ggml.tokens")->offset,
                           fmt::format("{} tokens: more than lockstep's maximum vocabulary size ({})", n,
                                       max_vocab_size()));
  }
  auto check_len = [&](const std::string& key, size_t len) {
    if (len != n) {
      throw ModelFormatError(f.path(), f.find(key)->offset,
                             fmt::format("'{}' has {} entries for {} tokens", key, len, n));
    }
  };
  data.attrs.assign(n, TokenAttr::kNormal);
  if (f.has("tokenizer.ggml.token_type")) {
    const auto& types = f.get_number_array("tokenizer.ggml.token_type");
    check_len("tokenizer.ggml.token_type", types.size());
    for (size_t i = 0; i < n; ++i) {
      switch (types[i] >= 0 && types[i] <= 6 ? static_cast<int>(types[i]) : 0) {
        case 1: data.attrs[i] = TokenAttr::kNormal; break;
        case 2: data.attrs[i] = TokenAttr::kUnknown; break;
        case 3: data.attrs[i] = TokenAttr::kControl; break;
        case 4: data.attrs[i] = TokenAttr::kUserDefined; break;
        case 6: data.attrs[i] = TokenAttr::kByte; break;
        default: data.attrs[i] = TokenAttr::kUnused; break;
      }
    }
  }
  auto opt_id = [&](const char* key) -> int32_t {
    auto v = f.get_int_opt(key);
    return v && *v >= 0 && static_cast<size_t>(*v) < n ? static_cast<int32_t>(*v) : -1;
  };
  if (model == "llama") {
    cfg.merge = VocabConfig::Merge::kScores;
    if (f.has("tokenizer.ggml.scores")) {
      const auto& s = f.get_number_array("tokenizer.ggml.scores");
      check_len("tokenizer.ggml.scores", s.size());
      data.scores.assign(s.begin(), s.end());
    } else {
      data.scores.assign(n, 0.0f);
    }
    cfg.byte_fallback = true;
    cfg.metaspace = true;
    cfg.add_space_prefix = f.get_bool_opt("tokenizer.ggml.add_space_prefix").value_or(true);
    cfg.decode_strips_prefix = cfg.add_space_prefix;
    cfg.add_bos = f.get_bool_opt("tokenizer.ggml.add_bos_token").value_or(true);
    cfg.bos = 1, cfg.eos = 2, cfg.unk = 0;
  } else if (model == "gpt2") {
    cfg.merge = VocabConfig::Merge::kRanks;
    cfg.byte_level = true;
    for (const std::string& m : f.get_string_array("tokenizer.ggml.merges")) {
      const size_t sp = m.find(' ', 1);
      if (sp == std::string::npos) {
        throw ModelFormatError(f.path(), f.find("tokenizer.ggml.merges")->offset,
                               fmt::format("merge '{}' is not \"left right\"", m));
      }
      data.merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
    }
    const std::string pre = f.get_string_opt("tokenizer.ggml.pre").value_or("default");
    try {
      for (const auto& p : pretokenizer_patterns(pre)) cfg.splitters.emplace_back(p);
    } catch (const std::invalid_argument& e) {
      throw ModelFormatError(f.path(), f.find("tokenizer.ggml.pre")->offset, e.what());
    }
    cfg.ignore_merges = pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe";
    cfg.add_bos = f.get_bool_opt("tokenizer.ggml.add_bos_token").value_or(cfg.ignore_merges);
    cfg.bos = cfg.eos = 11 < n ? 11 : -1;
  } else {
    throw ModelFormatError(f.path(), f.find("tokenizer.ggml.model")->offset,
                           fmt::format("tokenizer model '{}' is not supported (lockstep reads 'llama' "
                                       "(SentencePiece) and 'gpt2' (byte-level BPE))", model));
  }
  if (int32_t id = opt_id("tokenizer.ggml.bos_token_id"); id >= 0) cfg.bos = id;
  if (int32_t id = opt_id("tokenizer.ggml.eos_token_id"); id >= 0) cfg.eos = id;
  if (f.has("tokenizer.ggml.unknown_token_id")) cfg.unk = opt_id("tokenizer.ggml.unknown_token_id");
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    if (int32_t id = opt_id(key); id >= 0) cfg.eog.push_back(id);
  }
  for (size_t id = 0; id < n; ++id) {
    if (eog_texts().count(data.tokens[id]) &&
        (data.attrs[id] == TokenAttr::kControl || data.attrs[id] == TokenAttr::kUserDefined)) {
      cfg.eog.push_back(static_cast<int32_t>(id));
    }
  }
  try {
    return std::make_unique<VocabTokenizer>(std::move(data), std::move(cfg));
  } catch (const std::invalid_argument& e) {
    throw ModelFormatError(f.path(), 0, e.what());
  }
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  if (!fs::is_regular_file(path)) {
    throw std::runtime_error(fmt::format("{}: {}", path, fs::exists(path) ? "not a regular file" : "no such tokenizer file"));
  }
  const std::string name = fs::path(path).filename().string();
  {
    MappedFile head(path);
    if (head.size() >= 4 && std::memcmp(head.data(), "GGUF", 4) == 0) {
      GgufFile f(path);
      return load_gguf_tokenizer(f);
    }
  }
  if (name == "encoder.json" || name == "vocab.bpe") {
    const fs::path dir = fs::path(path).parent_path();
    return load_gpt2_tokenizer((dir / "encoder.json").string(), (dir / "vocab.bpe").string());
  }
  if (name.ends_with(".json")) return load_hf_tokenizer(path);
  return load_llama2c_tokenizer(path);
}

}  // namespace lockstep
