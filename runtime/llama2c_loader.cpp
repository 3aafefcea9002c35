// runtime/llama2c_loader.cpp — llama2.c checkpoints (legacy "version 0" format).
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "grammar/limits.h"
#include "runtime/errors.h"
#include "runtime/mapped_file.h"
#include "runtime/model.h"

namespace lockstep {

namespace {

// The ranges of the llama2.c header fields, checked on the raw int32 values before any
// arithmetic (they will move into a central EngineLimits). With them every size computed
// below fits in 64 bits (the sum of the weights stays under 2^50 floats).
constexpr int32_t kMaxDim = 1 << 16;
constexpr int32_t kMaxHiddenDim = 1 << 18;
constexpr int32_t kMaxLayers = 1024;
constexpr int32_t kMaxSeqLen = 1 << 20;

// a · b and a + b, throwing when the result does not fit in 64 bits (cannot happen within
// the limits above; checked so that a change of limit cannot make it wrap silently).
uint64_t mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("llama2.c checkpoint size overflows");
  return r;
}
uint64_t add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("llama2.c checkpoint size overflows");
  return r;
}

}  // namespace

std::shared_ptr<const LlamaModel> load_llama2c_model(const std::string& path) {
  auto file = std::make_shared<MappedFile>(path);
  constexpr size_t kHeader = 7 * sizeof(int32_t);
  if (file->size() < 4) {
    throw ModelFormatError(path, file->size(), fmt::format("file too short ({} bytes) to be a GGUF or llama2.c model",
                                                           file->size()));
  }
  if (file->size() < kHeader) {
    throw ModelFormatError(path, file->size(),
                           fmt::format("file is {} bytes; a llama2.c checkpoint starts with a "
                                       "{}-byte header",
                                       file->size(), kHeader));
  }
  int32_t h[7];
  std::memcpy(h, file->data(), kHeader);
  const std::string header = fmt::format(
      "dim={} hidden_dim={} n_layers={} n_heads={} n_kv_heads={} vocab_size={} seq_len={}", h[0],
      h[1], h[2], h[3], h[4], h[5], h[6]);
  auto bad = [&](const std::string& why) {
    throw ModelFormatError(path, 0, fmt::format("header ({}) is not a llama2.c checkpoint: {}",
                                                header, why));
  };
  // Raw values first: vocab_size is negated below (a negative one marks an unshared
  // classifier), so INT32_MIN must be out before that.
  if (h[0] <= 0 || h[0] > kMaxDim) bad("dim must be in 1..65536");
  if (h[1] <= 0 || h[1] > kMaxHiddenDim) bad("hidden_dim must be in 1..262144");
  if (h[2] <= 0 || h[2] > kMaxLayers) bad("n_layers must be in 1..1024");
  if (h[3] <= 0 || h[3] > h[0] || h[0] % h[3] != 0) bad("n_heads must divide dim");
  if (h[4] <= 0 || h[4] > h[3] || h[3] % h[4] != 0) bad("n_kv_heads must divide n_heads");
  const int64_t max_vocab = static_cast<int64_t>(std::min<uint64_t>(engine_limits().vocab_size, INT32_MAX));
  if (h[5] == 0 || h[5] < -max_vocab || h[5] > max_vocab) {
    bad(fmt::format("vocab_size out of range (1..{}, negated or not; --limit vocab_size=N)", max_vocab));
  }
  if (h[6] <= 0 || h[6] > kMaxSeqLen) bad("seq_len must be in 1..1048576");
  LlamaConfig c;
  c.dim = h[0];
  c.hidden_dim = h[1];
  c.n_layers = h[2];
  c.n_heads = h[3];
  c.n_kv_heads = h[4];
  const bool shared_classifier = h[5] > 0;
  c.vocab_size = h[5] < 0 ? -h[5] : h[5];
  c.seq_len = h[6];
  if (c.head_size() % 2 != 0) bad("the head size must be even (RoPE rotates pairs)");

  const uint64_t d = c.dim, hd = c.hidden_dim, L = c.n_layers, kv = c.kv_dim(), v = c.vocab_size;
  const uint64_t hs = c.head_size(), sl = c.seq_len;
  // v·d + L·d + L·d·d + 2·L·d·kv + L·d·d + L·d + 3·L·d·hd + d + sl·hs (+ v·d)
  uint64_t floats = mul(v, d);
  for (const uint64_t part : {mul(L, d), mul(mul(L, d), d), mul(2, mul(mul(L, d), kv)), mul(mul(L, d), d), mul(L, d),
                              mul(3, mul(mul(L, d), hd)), d, mul(sl, hs), shared_classifier ? 0 : mul(v, d)}) {
    floats = add(floats, part);
  }
  const uint64_t expected = add(kHeader, mul(floats, sizeof(float)));
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
