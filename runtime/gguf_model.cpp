// runtime/gguf_model.cpp — llama-architecture models from GGUF, and the llama2.c → GGUF
// converter.
#include <cmath>
#include <cstring>
#include <tuple>
#include <filesystem>

#include <fmt/format.h>

#include "grammar/limits.h"
#include "runtime/errors.h"
#include "runtime/gguf.h"
#include "runtime/model.h"
#include "runtime/tokenizer.h"

namespace lockstep {

namespace {

// The largest llama dimensions lockstep loads, checked on the raw metadata before any
// arithmetic (they will move into a central EngineLimits). Real models stay well below:
// embedding 16,384, feed-forward 53,248, 126 blocks, 128 heads, vocabularies ~262k ids,
// contexts of a few million tokens. With these, every size the loader computes (d · v,
// d · h, …) fits in 64 bits and every dimension in an int32.
constexpr int64_t kMaxEmbedding = int64_t{1} << 16;
constexpr int64_t kMaxFeedForward = int64_t{1} << 18;
constexpr int64_t kMaxBlocks = 1024;
constexpr int64_t kMaxHeads = kMaxEmbedding;
constexpr int64_t kMaxContext = int64_t{1} << 26;

// Float32 view of a tensor: the mapped bytes for F32, a dequantized copy otherwise.
const float* tensor_as_f32(const GgufFile& f, const GgufTensorInfo& t,
                           std::vector<std::vector<float>>& owned) {
  const uint8_t* src = f.data(t);
  const size_t n = t.elements();
  switch (static_cast<GgmlType>(t.type)) {
    case GgmlType::kF32:
      if (reinterpret_cast<uintptr_t>(src) % alignof(float) == 0) {
        return reinterpret_cast<const float*>(src);
      } else {
        owned.emplace_back(n);
        std::memcpy(owned.back().data(), src, n * 4);
        return owned.back().data();
      }
    case GgmlType::kF16:
    case GgmlType::kBF16: {
      owned.emplace_back(n);
      float* out = owned.back().data();
      const bool bf = static_cast<GgmlType>(t.type) == GgmlType::kBF16;
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        out[i] = bf ? bf16_to_float(h) : half_to_float(h);
      }
      return out;
    }
    case GgmlType::kQ8_0:
      owned.emplace_back(n);
      dequantize_q8_0(src, owned.back().data(), n);
      return owned.back().data();
  }
  return nullptr;  // unreachable: GgufFile rejects other types
}

struct GgufStorage {
  std::shared_ptr<const GgufFile> file;
  std::vector<std::vector<float>> owned;
};

}  // namespace

std::shared_ptr<const LlamaModel> load_gguf_model(std::shared_ptr<const GgufFile> file) {
  const GgufFile& f = *file;
  const std::string arch = f.get_string("general.architecture");
  if (arch != "llama") {
    throw ModelFormatError(f.path(), f.find("general.architecture")->offset,
                           fmt::format("architecture '{}' is not supported (lockstep runs 'llama')",
                                       arch));
  }
  auto storage = std::make_shared<GgufStorage>();
  storage->file = file;
  auto tensor = [&](const std::string& name, std::vector<uint64_t> dims) -> const float* {
    const GgufTensorInfo* t = f.find_tensor(name);
    if (!t) throw ModelFormatError(f.path(), 0, fmt::format("tensor '{}' is missing", name));
    if (t->dims != dims) {
      std::string want, got;
      for (auto d : dims) want += (want.empty() ? "" : "×") + std::to_string(d);
      for (auto d : t->dims) got += (got.empty() ? "" : "×") + std::to_string(d);
      throw ModelFormatError(f.path(), t->offset, fmt::format("tensor '{}' is {}, expected {}",
                                                              name, got, want));
    }
    return tensor_as_f32(f, *t, storage->owned);
  };
  // A dimension from the metadata, range-checked before it is narrowed or multiplied.
  auto dimension = [&](const std::string& key, int64_t max, std::optional<int64_t> fallback = std::nullopt) {
    const std::optional<int64_t> v = fallback ? f.get_int_opt(key).value_or(*fallback) : f.get_int(key);
    if (*v < 1 || *v > max) {
      throw ModelFormatError(f.path(), f.find(key) ? f.find(key)->offset : 0,
                             fmt::format("metadata '{}' is {}; lockstep loads 1..{}", key, *v, max));
    }
    return static_cast<int32_t>(*v);
  };
  LlamaConfig c;
  c.dim = dimension("llama.embedding_length", kMaxEmbedding);
  c.hidden_dim = dimension("llama.feed_forward_length", kMaxFeedForward);
  c.n_layers = dimension("llama.block_count", kMaxBlocks);
  c.n_heads = dimension("llama.attention.head_count", kMaxHeads);
  c.n_kv_heads = dimension("llama.attention.head_count_kv", kMaxHeads, c.n_heads);
  c.seq_len = dimension("llama.context_length", kMaxContext);
  c.rms_eps = static_cast<float>(f.get_float_opt("llama.attention.layer_norm_rms_epsilon").value_or(1e-5));
  c.rope_theta = static_cast<float>(f.get_float_opt("llama.rope.freq_base").value_or(10000.0));
  for (const auto& [key, x, zero_ok] : {std::tuple("llama.attention.layer_norm_rms_epsilon", c.rms_eps, true),
                                        std::tuple("llama.rope.freq_base", c.rope_theta, false)}) {
    if (!std::isfinite(x) || x < 0 || (x == 0 && !zero_ok)) {
      throw ModelFormatError(f.path(), f.find(key)->offset, fmt::format("metadata '{}' is {}", key, x));
    }
  }
  const GgufTensorInfo* emb = f.find_tensor("token_embd.weight");
  if (!emb || emb->dims.size() != 2) {
    throw ModelFormatError(f.path(), 0, "tensor 'token_embd.weight' (2-D) is missing");
  }
  if (emb->dims[1] > static_cast<uint64_t>(static_cast<int64_t>(engine_limits().vocab_size))) {
    throw ModelFormatError(f.path(), emb->offset, fmt::format("tensor 'token_embd.weight' has {} rows: more than "
                                                              "lockstep's maximum vocabulary size ({})",
                                                              emb->dims[1], static_cast<int64_t>(engine_limits().vocab_size)));
  }
  c.vocab_size = static_cast<int32_t>(emb->dims[1]);
  if (c.dim <= 0 || c.n_heads <= 0 || c.dim % c.n_heads != 0 || c.n_kv_heads <= 0 ||
      c.n_heads % c.n_kv_heads != 0 || c.n_layers <= 0 || c.hidden_dim <= 0 || c.seq_len <= 0 ||
      c.head_size() % 2 != 0) {
    throw ModelFormatError(f.path(), 0, fmt::format("inconsistent llama metadata: dim {} heads {} "
                                                    "kv heads {} layers {} ff {} context {}",
                                                    c.dim, c.n_heads, c.n_kv_heads, c.n_layers,
                                                    c.hidden_dim, c.seq_len));
  }
  const uint64_t d = c.dim, h = c.hidden_dim, kv = c.kv_dim(), v = c.vocab_size;
  const float* embedding = tensor("token_embd.weight", {d, v});
  std::vector<LlamaLayerWeights> layers;
  for (int32_t l = 0; l < c.n_layers; ++l) {
    const std::string p = fmt::format("blk.{}.", l);
    layers.push_back({tensor(p + "attn_norm.weight", {d}), tensor(p + "attn_q.weight", {d, d}),
                      tensor(p + "attn_k.weight", {d, kv}), tensor(p + "attn_v.weight", {d, kv}),
                      tensor(p + "attn_output.weight", {d, d}), tensor(p + "ffn_norm.weight", {d}),
                      tensor(p + "ffn_gate.weight", {d, h}), tensor(p + "ffn_down.weight", {h, d}),
                      tensor(p + "ffn_up.weight", {d, h})});
  }
  const float* norm = tensor("output_norm.weight", {d});
  const float* classifier = f.find_tensor("output.weight") ? tensor("output.weight", {d, v}) : embedding;
  return std::make_shared<LlamaModel>(c, std::move(layers), embedding, norm, classifier,
                                      std::shared_ptr<const void>(storage, storage.get()));
}

}  // namespace lockstep

namespace lockstep {

void convert_llama2c_to_gguf(const std::string& model_path, const std::string& tokenizer_path,
                             const std::string& out_path, WeightType type) {
  const auto model = load_llama2c_model(model_path);
  write_llama_gguf(*model, tokenizer_path, std::filesystem::path(model_path).stem().string(), out_path, type);
}

void write_llama_gguf(const LlamaModel& model_ref, const std::string& tokenizer_path, const std::string& name,
                      const std::string& out_path, WeightType type) {
  const LlamaModel* model = &model_ref;
  const LlamaConfig& c = model->config();
  Llama2cVocab vocab = read_llama2c_vocab(tokenizer_path, c.vocab_size);

  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_string("general.name", name);
  // llama_ftype: ALL_F32 = 0, MOSTLY_F16 = 1, MOSTLY_Q8_0 = 7
  w.set_u32("general.file_type", type == WeightType::kQ8_0 ? 7 : type == WeightType::kF16 ? 1 : 0);
  w.set_u32("llama.context_length", static_cast<uint32_t>(c.seq_len));
  w.set_u32("llama.embedding_length", static_cast<uint32_t>(c.dim));
  w.set_u32("llama.block_count", static_cast<uint32_t>(c.n_layers));
  w.set_u32("llama.feed_forward_length", static_cast<uint32_t>(c.hidden_dim));
  w.set_u32("llama.attention.head_count", static_cast<uint32_t>(c.n_heads));
  w.set_u32("llama.attention.head_count_kv", static_cast<uint32_t>(c.n_kv_heads));
  w.set_f32("llama.attention.layer_norm_rms_epsilon", c.rms_eps);
  w.set_f32("llama.rope.freq_base", c.rope_theta);
  w.set_u32("llama.rope.dimension_count", static_cast<uint32_t>(c.head_size()));

  // SentencePiece vocabulary as llama.cpp stores it: U+2581 for spaces, <0xNN> byte tokens.
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (size_t id = 0; id < vocab.pieces.size(); ++id) {
    std::string p = vocab.pieces[id];
    int32_t type = 1;  // normal
    if (id == 0) {
      p = "<unk>", type = 2;
    } else if (id == 1) {
      p = "<s>", type = 3;
    } else if (id == 2) {
      p = "</s>", type = 3;
    } else if (p.size() == 6 && p.rfind("<0x", 0) == 0 && p.back() == '>') {
      type = 6;  // byte
    } else {
      std::string escaped;
      for (char ch : p) escaped += ch == ' ' ? std::string("\xE2\x96\x81") : std::string(1, ch);
      p = escaped;
    }
    tokens.push_back(std::move(p));
    types.push_back(type);
  }
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_string("tokenizer.ggml.pre", "default");
  w.set_string_array("tokenizer.ggml.tokens", tokens);
  w.set_f32_array("tokenizer.ggml.scores", vocab.scores);
  w.set_i32_array("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_eos_token", false);
  w.set_bool("tokenizer.ggml.add_space_prefix", true);

  const uint64_t d = c.dim, h = c.hidden_dim, kv = c.kv_dim(), v = c.vocab_size;
  auto add = [&](const std::string& name, const float* x, std::vector<uint64_t> dims) {
    uint64_t n = 1;
    for (auto k : dims) n *= k;
    if (type == WeightType::kQ8_0 && dims.size() == 2 && dims[0] % 32 == 0) {
      w.add_tensor(name, dims, GgmlType::kQ8_0, quantize_q8_0(x, n));
    } else if (type == WeightType::kF16 && dims.size() == 2) {
      std::vector<uint8_t> bytes(n * 2);
      for (uint64_t i = 0; i < n; ++i) {
        const uint16_t h = float_to_half(x[i]);
        std::memcpy(&bytes[2 * i], &h, 2);
      }
      w.add_tensor(name, dims, GgmlType::kF16, std::move(bytes));
    } else {
      std::vector<uint8_t> bytes(n * 4);
      std::memcpy(bytes.data(), x, n * 4);
      w.add_tensor(name, dims, GgmlType::kF32, std::move(bytes));
    }
  };
  add("token_embd.weight", model->embedding(), {d, v});
  for (int32_t l = 0; l < c.n_layers; ++l) {
    const auto& L = model->layer(l);
    const std::string p = fmt::format("blk.{}.", l);
    add(p + "attn_norm.weight", L.rms_att, {d});
    add(p + "attn_q.weight", L.wq, {d, d});
    add(p + "attn_k.weight", L.wk, {d, kv});
    add(p + "attn_v.weight", L.wv, {d, kv});
    add(p + "attn_output.weight", L.wo, {d, d});
    add(p + "ffn_norm.weight", L.rms_ffn, {d});
    add(p + "ffn_gate.weight", L.w1, {d, h});
    add(p + "ffn_down.weight", L.w2, {h, d});
    add(p + "ffn_up.weight", L.w3, {d, h});
  }
  add("output_norm.weight", model->rms_final(), {d});
  if (model->classifier() != model->embedding()) add("output.weight", model->classifier(), {d, v});
  w.write(out_path);
}

}  // namespace lockstep
