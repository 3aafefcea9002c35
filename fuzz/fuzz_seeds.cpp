// fuzz/fuzz_seeds.cpp — writes seed inputs derived from the shared data into a scratch
// folder (never into the repository): fuzz_seeds SHARED_DIR OUT_DIR.
//
//   OUT/regex/         the patterns of rust-lang/regex's TOML tests and XGrammar's regex cases
//   OUT/schema/        the schemas of JSONSchemaBench (JME, Synthesized) and of the
//                      JSON-Schema-Test-Suite (draft 2020-12)
//   OUT/tools/         BFCL function lists (JSON Lines files as arrays, entries one by one)
//   OUT/tokenizer_json/ the shared tokenizer.json files shrunk to their first 400 tokens
//   OUT/gguf/          the shared GGUF vocabularies shrunk alike, and tiny llama models
//   OUT/llama2c/       a tiny llama2.c checkpoint
// Inputs that are whole files of the shared data (GBNF grammars, MCP tool lists,
// tok512.bin) are read in place by fuzz/run.sh instead.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "runtime/gguf.h"
#include "runtime/model.h"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

constexpr size_t kShrunkTokens = 400;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class SeedDir {
 public:
  explicit SeedDir(const fs::path& dir) : dir_(dir) { fs::create_directories(dir); }
  void add(const std::string& bytes) {
    if (bytes.empty() || !seen_.insert(bytes).second) return;
    std::ofstream(dir_ / ("seed-" + std::to_string(seen_.size())), std::ios::binary) << bytes;
  }
  size_t size() const { return seen_.size(); }
  const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
  std::set<std::string> seen_;
};

std::vector<fs::path> files(const fs::path& dir, const std::string& suffix) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().string().ends_with(suffix)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void regex_seeds(const fs::path& shared, SeedDir& out) {
  for (const auto& path : files(shared / "regex/rust-regex-testdata", ".toml")) {
    try {
      const auto doc = toml::parse_file(path.string());
      const auto* tests = doc["test"].as_array();
      if (!tests) continue;
      for (const auto& t : *tests) {
        const auto* table = t.as_table();
        if (!table) continue;
        const auto* regex = table->get("regex");
        if (!regex) continue;
        if (auto s = regex->value<std::string>()) out.add(*s);
        if (const auto* list = regex->as_array()) {
          for (const auto& r : *list) {
            if (auto s = r.value<std::string>()) out.add(*s);
          }
        }
      }
    } catch (const toml::parse_error&) {
    }
  }
  const auto cases = ordered_json::parse(read(shared / "regex/xgrammar/regex_converter_cases.json"), nullptr, false);
  if (cases.is_array()) {
    for (const auto& c : cases) {
      if (c.contains("regex") && c["regex"].is_string()) out.add(c["regex"].get<std::string>());
    }
  }
}

void schema_seeds(const fs::path& shared, SeedDir& out) {
  // Not the Handwritten split: its multipleOf algebra takes over 10 s per schema under the
  // sanitizers, longer than -timeout.
  for (const char* split : {"JME", "Synthesized"}) {
    for (const auto& path : files(shared / "schemas/jsonschemabench" / split, ".json")) {
      const auto doc = ordered_json::parse(read(path), nullptr, false);
      if (doc.is_object() && doc.contains("schema")) out.add(doc["schema"].dump());
    }
  }
  for (const auto& path : files(shared / "schemas/json-schema-test-suite/tests/draft2020-12", ".json")) {
    const auto doc = ordered_json::parse(read(path), nullptr, false);
    if (!doc.is_array()) continue;
    for (const auto& group : doc) {
      if (group.is_object() && group.contains("schema")) out.add(group["schema"].dump());
    }
  }
}

// JSON Lines: every line parsed; the whole file also as one array.
void tools_seeds(const fs::path& shared, SeedDir& out) {
  const auto add_lines = [&](const fs::path& path, size_t max_lines, bool as_array) {
    std::istringstream in(read(path));
    std::string line;
    ordered_json all = ordered_json::array();
    for (size_t n = 0; n < max_lines && std::getline(in, line); ++n) {
      auto doc = ordered_json::parse(line, nullptr, false);
      if (doc.is_discarded()) continue;
      if (as_array) all.push_back(std::move(doc)); else out.add(doc.dump());
    }
    if (as_array) out.add(all.dump());
  };
  for (const auto& path : files(shared / "toolcalls/bfcl_v4/multi_turn_func_doc", ".json")) add_lines(path, 1000, true);
  for (const char* name : {"BFCL_v4_simple_python.json", "BFCL_v4_live_multiple.json", "BFCL_v4_parallel.json",
                           "BFCL_v4_simple_java.json"}) {
    add_lines(shared / "toolcalls/bfcl_v4" / name, 40, false);
  }
}

// A tokenizer.json keeping tokens 0..kShrunkTokens-1, the merges among them, and its first
// added tokens renumbered after them.
void tokenizer_json_seeds(const fs::path& shared, SeedDir& out) {
  for (const char* name : {"llama2/hf/tokenizer.json", "llama3-hf/tokenizer.json", "qwen3-hf/tokenizer.json"}) {
    // nlohmann::json, not ordered_json: ordered objects find keys by linear search, too slow
    // for vocabularies of 100,000 entries.
    auto doc = nlohmann::json::parse(read(shared / "vocab" / name), nullptr, false);
    if (!doc.is_object() || !doc.contains("model")) continue;
    auto& model = doc["model"];
    std::set<std::string> kept;
    nlohmann::json vocab = nlohmann::json::object();
    for (const auto& [piece, id] : model["vocab"].items()) {
      if (id.is_number() && id.get<int64_t>() < static_cast<int64_t>(kShrunkTokens)) {
        vocab[piece] = id;
        kept.insert(piece);
      }
    }
    model["vocab"] = vocab;
    nlohmann::json merges = nlohmann::json::array();
    for (const auto& m : model["merges"]) {
      std::string a, b;
      if (m.is_string()) {
        const std::string s = m.get<std::string>();
        const size_t space = s.find(' ');
        if (space == std::string::npos) continue;
        a = s.substr(0, space), b = s.substr(space + 1);
      } else if (m.is_array() && m.size() == 2) {
        a = m[0].get<std::string>(), b = m[1].get<std::string>();
      }
      if (kept.count(a) && kept.count(b) && kept.count(a + b)) merges.push_back(m);
    }
    model["merges"] = merges;
    nlohmann::json added = nlohmann::json::array();
    std::map<int64_t, int64_t> renumbered;
    for (const auto& t : doc["added_tokens"]) {
      if (added.size() == 8) break;
      nlohmann::json copy = t;
      const int64_t id = kShrunkTokens + added.size();
      if (t.contains("id") && t["id"].is_number()) renumbered[t["id"].get<int64_t>()] = id;
      copy["id"] = id;
      added.push_back(std::move(copy));
    }
    doc["added_tokens"] = added;
    // Special-token ids in the post-processor template follow the renumbering.
    if (doc.contains("post_processor") && doc["post_processor"].is_object()) {
      std::vector<nlohmann::json*> stack = {&doc["post_processor"]};
      while (!stack.empty()) {
        nlohmann::json* j = stack.back();
        stack.pop_back();
        if (j->is_object() && j->contains("ids") && (*j)["ids"].is_array()) {
          for (auto& id : (*j)["ids"]) {
            if (id.is_number()) id = renumbered.count(id.get<int64_t>()) ? renumbered[id.get<int64_t>()] : 1;
          }
        }
        if (j->is_structured()) {
          for (auto& child : *j) stack.push_back(&child);
        }
      }
    }
    out.add(doc.dump());
  }
}

// A GGUF vocabulary keeping tokens 0..kShrunkTokens-1, their scores and types, and the
// merges among them; scalar metadata as it is.
void gguf_vocab_seed(const fs::path& path, const fs::path& out_file) {
  const lockstep::GgufFile f(path.string());
  lockstep::GgufWriter w;
  std::set<std::string> kept;
  for (const auto& [key, v] : f.metadata()) {
    using T = lockstep::GgufType;
    switch (v.type) {
      case T::kString: w.set_string(key, std::get<std::string>(v.scalar)); break;
      case T::kBool: w.set_bool(key, std::get<bool>(v.scalar)); break;
      case T::kF32: case T::kF64: w.set_f32(key, static_cast<float>(std::get<double>(v.scalar))); break;
      case T::kI8: case T::kI16: case T::kI32: case T::kI64:
        w.set_i32(key, static_cast<int32_t>(std::get<int64_t>(v.scalar)));
        break;
      case T::kU8: case T::kU16: case T::kU32: case T::kU64: {
        uint64_t x = std::get<uint64_t>(v.scalar);
        if (key.ends_with("_token_id") && x >= kShrunkTokens) x = 1;
        w.set_u32(key, static_cast<uint32_t>(x));
        break;
      }
      case T::kArray:
        if (key == "tokenizer.ggml.merges") continue;  // below, once the tokens are known
        if (v.element_type == T::kString) {
          std::vector<std::string> s(v.strings.begin(), v.strings.begin() + std::min(v.strings.size(), kShrunkTokens));
          if (key == "tokenizer.ggml.tokens") kept.insert(s.begin(), s.end());
          w.set_string_array(key, s);
        } else if (v.element_type == T::kF32 || v.element_type == T::kF64) {
          std::vector<float> x;
          for (size_t i = 0; i < std::min(v.numbers.size(), kShrunkTokens); ++i) x.push_back(static_cast<float>(v.numbers[i]));
          w.set_f32_array(key, x);
        } else {
          std::vector<int32_t> x;
          for (size_t i = 0; i < std::min(v.numbers.size(), kShrunkTokens); ++i) x.push_back(static_cast<int32_t>(v.numbers[i]));
          w.set_i32_array(key, x);
        }
        break;
    }
  }
  if (f.has("tokenizer.ggml.merges")) {
    std::vector<std::string> merges;
    for (const auto& m : f.get_string_array("tokenizer.ggml.merges")) {
      const size_t space = m.find(' ');
      if (space == std::string::npos) continue;
      const std::string a = m.substr(0, space), b = m.substr(space + 1);
      if (kept.count(a) && kept.count(b) && kept.count(a + b)) merges.push_back(m);
    }
    w.set_string_array("tokenizer.ggml.merges", merges);
  }
  w.write(out_file.string());
}

// A llama2.c checkpoint of 1 layer, dim 8, 2 heads (1 key/value head), vocabulary 512,
// context 4: header then float32 weights (embedding, per-layer norms and matrices, the
// final norm, the RoPE tables).
void write_tiny_llama2c(const fs::path& path) {
  const int32_t dim = 8, hidden = 16, layers = 1, heads = 2, kv_heads = 1, vocab = 512, seq = 4;
  const int32_t head = dim / heads, kv_dim = dim * kv_heads / heads;
  const size_t floats = size_t(vocab) * dim + layers * (dim + dim * dim + 2 * dim * kv_dim + dim * dim + dim +
                                                        3 * dim * hidden) +
                        dim + 2 * size_t(seq) * head / 2;
  std::ofstream out(path, std::ios::binary);
  const int32_t header[7] = {dim, hidden, layers, heads, kv_heads, vocab, seq};
  out.write(reinterpret_cast<const char*>(header), sizeof header);
  for (size_t i = 0; i < floats; ++i) {
    const float x = static_cast<float>((i * 7919) % 200) / 100.0f - 1.0f;
    out.write(reinterpret_cast<const char*>(&x), sizeof x);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: fuzz_seeds SHARED_DIR OUT_DIR\n";
    return 2;
  }
  const fs::path shared = argv[1], out = argv[2];
  SeedDir regex(out / "regex"), schema(out / "schema"), tools(out / "tools"), tok(out / "tokenizer_json");
  regex_seeds(shared, regex);
  schema_seeds(shared, schema);
  tools_seeds(shared, tools);
  tokenizer_json_seeds(shared, tok);
  fs::create_directories(out / "gguf");
  fs::create_directories(out / "llama2c");
  size_t gguf = 0;
  for (const auto& path : files(shared / "vocab/llama.cpp-ggml-vocab", ".gguf")) {
    try {
      gguf_vocab_seed(path, out / "gguf" / path.filename());
      ++gguf;
    } catch (const std::exception& e) {
      std::cerr << "fuzz_seeds: " << path.string() << ": " << e.what() << "\n";
    }
  }
  const fs::path tiny = out / "llama2c/tiny.bin";
  write_tiny_llama2c(tiny);
  const fs::path tok512 = shared / "models/stories260K/tok512.bin";
  if (fs::exists(tok512)) {
    lockstep::convert_llama2c_to_gguf(tiny.string(), tok512.string(), (out / "gguf/tiny-f32.gguf").string());
    lockstep::convert_llama2c_to_gguf(tiny.string(), tok512.string(), (out / "gguf/tiny-f16.gguf").string(),
                                      lockstep::WeightType::kF16);
    gguf += 2;
  }
  std::cout << "fuzz_seeds: " << regex.size() << " regex, " << schema.size() << " schema, " << tools.size()
            << " tools, " << tok.size() << " tokenizer.json, " << gguf << " gguf seeds in " << out.string() << "\n";
  return 0;
}
