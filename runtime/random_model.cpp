// runtime/random_model.cpp — a llama model of any shape with random weights, for measuring
// the forward pass on models larger than the bundled one (`lockstep convert --random-llama`).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "runtime/model.h"

namespace lockstep {

namespace {

// splitmix64 (Steele, Lea, Flood 2014): the same stream on every platform.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1): the top 24 bits.
  float uniform() { return static_cast<float>(next() >> 40) * 0x1p-23f - 1.0f; }
};

}  // namespace

std::shared_ptr<const LlamaModel> random_llama_model(const LlamaConfig& c, uint64_t seed) {
  if (c.dim <= 0 || c.n_heads <= 0 || c.dim % c.n_heads != 0 || c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0 ||
      c.head_size() % 2 != 0 || c.n_layers <= 0 || c.hidden_dim <= 0 || c.vocab_size <= 0 || c.seq_len <= 0) {
    throw std::invalid_argument(fmt::format("inconsistent llama shape: dim {} heads {} kv heads {} layers {} ff {} "
                                            "vocabulary {} context {} (heads divide dim into an even head size; kv "
                                            "heads divide heads)",
                                            c.dim, c.n_heads, c.n_kv_heads, c.n_layers, c.hidden_dim, c.vocab_size,
                                            c.seq_len));
  }
  const size_t d = c.dim, h = c.hidden_dim, kv = c.kv_dim(), v = c.vocab_size;
  const size_t per_layer = 2 * d + 2 * d * d + 2 * kv * d + 3 * h * d;
  auto storage = std::make_shared<std::vector<float>>(v * d + d + c.n_layers * per_layer);
  SplitMix64 rng{seed};
  float* next = storage->data();
  auto matrix = [&](size_t rows, size_t cols) {
    float* m = next;
    const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
    for (size_t i = 0; i < rows * cols; ++i) m[i] = rng.uniform() * scale;
    next += rows * cols;
    return m;
  };
  auto ones = [&](size_t n) {
    float* m = next;
    std::fill(m, m + n, 1.0f);
    next += n;
    return m;
  };
  const float* embedding = matrix(v, d);
  std::vector<LlamaLayerWeights> layers;
  for (int32_t l = 0; l < c.n_layers; ++l) {
    LlamaLayerWeights w{};
    w.rms_att = ones(d);
    w.wq = matrix(d, d);
    w.wk = matrix(kv, d);
    w.wv = matrix(kv, d);
    w.wo = matrix(d, d);
    w.rms_ffn = ones(d);
    w.w1 = matrix(h, d);
    w.w2 = matrix(d, h);
    w.w3 = matrix(h, d);
    layers.push_back(w);
  }
  const float* norm = ones(d);
  return std::make_shared<LlamaModel>(c, std::move(layers), embedding, norm, embedding, storage);
}

}  // namespace lockstep
