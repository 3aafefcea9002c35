// runtime/llama2c_loader.cpp — llama2.c checkpoints (legacy "version 0" format).
#include <cstring>

#include <fmt/format.h>

#include "runtime/errors.h"
#include "runtime/mapped_file.h"
#include "runtime/model.h"

namespace lockstep {

std::shared_ptr<const LlamaModel> load_llama2c_model(const std::string& path) {
  auto file = std::make_shared<MappedFile>(path);
  constexpr size_t kHeader = 7 * sizeof(int32_t);
  if (file->size() < kHeader) {
    throw ModelFormatError(path, file->size(),
                           fmt::format("file is {} bytes; a llama2.c checkpoint starts with a "
                                       "{}-byte header",
                                       file->size(), kHeader));
  }
  int32_t h[7];
  std::memcpy(h, file->data(), kHeader);
  LlamaConfig c;
  c.dim = h[0];
  c.hidden_dim = h[1];
  c.n_layers = h[2];
  c.n_heads = h[3];
  c.n_kv_heads = h[4];
  const bool shared_classifier = h[5] > 0;
  c.vocab_size = h[5] < 0 ? -h[5] : h[5];
  c.seq_len = h[6];
  const std::string header = fmt::format(
      "dim={} hidden_dim={} n_layers={} n_heads={} n_kv_heads={} vocab_size={} seq_len={}", h[0],
      h[1], h[2], h[3], h[4], h[5], h[6]);
  auto bad = [&](const char* why) {
    throw ModelFormatError(path, 0, fmt::format("header ({}) is not a llama2.c checkpoint: {}",
                                                header, why));
  };
  if (c.dim <= 0 || c.dim > (1 << 16)) bad("dim must be in 1..65536");
  if (c.hidden_dim <= 0 || c.hidden_dim > (1 << 18)) bad("hidden_dim must be in 1..262144");
  if (c.n_layers <= 0 || c.n_layers > 1024) bad("n_layers must be in 1..1024");
  if (c.n_heads <= 0 || c.dim % c.n_heads != 0) bad("n_heads must divide dim");
  if (c.head_size() % 2 != 0) bad("the head size must be even (RoPE rotates pairs)");
  if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0) bad("n_kv_heads must divide n_heads");
  if (c.vocab_size <= 0 || c.vocab_size > (1 << 24) || h[5] == INT32_MIN) bad("vocab_size out of range");
  if (c.seq_len <= 0 || c.seq_len > (1 << 20)) bad("seq_len must be in 1..1048576");

  const uint64_t d = c.dim, hd = c.hidden_dim, L = c.n_layers, kv = c.kv_dim(), v = c.vocab_size;
  const uint64_t hs = c.head_size(), sl = c.seq_len;
  const uint64_t floats = v * d + L * d + L * d * d + 2 * L * d * kv + L * d * d + L * d +
                          3 * L * d * hd + d + sl * hs + (shared_classifier ? 0 : v * d);
  const uint64_t expected = kHeader + floats * sizeof(float);
  if (file->size() != expected) {
    throw ModelFormatError(
        path, std::min<uint64_t>(file->size(), expected),
        fmt::format("file is {} bytes, but its header ({}) implies {} bytes{}", file->size(),
                    header, expected, file->size() < expected ? " (truncated?)" : ""));
  }

  const float* p = reinterpret_cast<const float*>(file->data() + kHeader);
  auto take = [&](uint64_t n) {
    const float* at = p;
    p += n;
    return at;
  };
  const float* embedding = take(v * d);
  const float* rms_att = take(L * d);
  const float* wq = take(L * d * d);
  const float* wk = take(L * d * kv);
  const float* wv = take(L * d * kv);
  const float* wo = take(L * d * d);
  const float* rms_ffn = take(L * d);
  const float* w1 = take(L * d * hd);
  const float* w2 = take(L * hd * d);
  const float* w3 = take(L * d * hd);
  const float* rms_final = take(d);
  take(sl * hs);  // freq_cis_real and freq_cis_imag (RoPE tables; recomputed instead)
  const float* classifier = shared_classifier ? embedding : take(v * d);
  std::vector<LlamaLayerWeights> layers(static_cast<size_t>(c.n_layers));
  for (uint64_t l = 0; l < L; ++l) {
    layers[l] = {rms_att + l * d,      wq + l * d * d,       wk + l * d * kv,
                 wv + l * d * kv,      wo + l * d * d,       rms_ffn + l * d,
                 w1 + l * d * hd,      w2 + l * hd * d,      w3 + l * d * hd};
  }
  return std::make_shared<LlamaModel>(c, std::move(layers), embedding, rms_final, classifier,
                                      std::shared_ptr<const void>(file, file.get()));
}

}  // namespace lockstep
