// runtime/llama_model.cpp — the llama forward pass (float32, single thread).
//
// Mirrors llama2.c's run.c operation for operation (float accumulation order included),
// so greedy decoding reproduces its published outputs exactly.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "runtime/model.h"

namespace lockstep {

LlamaModel::LlamaModel(LlamaConfig config, std::vector<LlamaLayerWeights> layers,
                       const float* embedding, const float* rms_final, const float* classifier,
                       std::shared_ptr<const void> storage)
    : config_(config),
      layers_(std::move(layers)),
      embedding_(embedding),
      rms_final_(rms_final),
      classifier_(classifier),
      storage_(std::move(storage)) {}

size_t LlamaModel::parameter_count() const {
  const auto& c = config_;
  const size_t d = c.dim, h = c.hidden_dim, kv = c.kv_dim(), v = c.vocab_size;
  size_t n = v * d + d;
  n += c.n_layers * (2 * d + d * d * 2 + kv * d * 2 + 3 * h * d);
  if (classifier_ != embedding_) n += v * d;
  return n;
}

namespace {

void rmsnorm(float* o, const float* x, const float* w, int n, float eps) {
  float ss = 0.0f;
  for (int j = 0; j < n; j++) ss += x[j] * x[j];
  ss /= static_cast<float>(n);
  ss += eps;
  ss = 1.0f / std::sqrt(ss);
  for (int j = 0; j < n; j++) o[j] = w[j] * (ss * x[j]);
}

void softmax(float* x, int n) {
  float max = x[0];
  for (int i = 1; i < n; i++) max = x[i] > max ? x[i] : max;
  float sum = 0.0f;
  for (int i = 0; i < n; i++) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  for (int i = 0; i < n; i++) x[i] /= sum;
}

// For each of `batch` inputs b: xout[b] (d) = W (d, n) · x[b] (n). Each row of W is read once
// for the whole batch; every output sums in the same order as a single matrix-vector
// product, so batching changes no bit of the result.
void matmul(float* xout, const float* x, const float* w, int n, int d, int batch = 1) {
  for (int i = 0; i < d; i++) {
    const float* row = w + static_cast<size_t>(i) * n;
    for (int b = 0; b < batch; b++) {
      const float* xb = x + static_cast<size_t>(b) * n;
      float val = 0.0f;
      for (int j = 0; j < n; j++) val += row[j] * xb[j];
      xout[static_cast<size_t>(b) * d + i] = val;
    }
  }
}

}  // namespace

InferenceState::InferenceState(std::shared_ptr<const LlamaModel> model, int32_t n_ctx)
    : model_(std::move(model)) {
  const auto& c = model_->config();
  n_ctx_ = n_ctx > 0 ? std::min(n_ctx, c.seq_len) : std::min(c.seq_len, kDefaultMaxContext);
  att_.resize(static_cast<size_t>(c.n_heads) * n_ctx_);
  logits_.resize(c.vocab_size);
  const size_t cache = static_cast<size_t>(c.n_layers) * n_ctx_ * c.kv_dim();
  key_cache_.resize(cache);
  value_cache_.resize(cache);
}

void InferenceState::check(int32_t token, int32_t pos) const {
  const LlamaConfig& c = model_->config();
  if (token < 0 || token >= c.vocab_size) {
    throw std::out_of_range(fmt::format("token id {} is outside the model's vocabulary ({})",
                                        token, c.vocab_size));
  }
  if (pos < 0 || pos >= n_ctx_) {
    throw std::out_of_range(fmt::format("position {} is outside the context ({} tokens)", pos,
                                        n_ctx_));
  }
}

std::span<const float> InferenceState::forward(int32_t token, int32_t pos) {
  return forward(std::span<const int32_t>(&token, 1), pos);
}

std::span<const float> InferenceState::forward(std::span<const int32_t> tokens, int32_t pos) {
  const LlamaModel& m = *model_;
  const LlamaConfig& c = m.config();
  if (tokens.empty()) throw std::invalid_argument("forward: no tokens");
  for (size_t b = 0; b < tokens.size(); ++b) check(tokens[b], pos + static_cast<int32_t>(b));
  const int n = static_cast<int>(tokens.size());
  const int dim = c.dim, hidden = c.hidden_dim, head_size = c.head_size(), kv_dim = c.kv_dim();
  const int kv_mul = c.n_heads / c.n_kv_heads;
  const size_t un = static_cast<size_t>(n);
  if (x_.size() < un * dim) {  // buffers for the largest batch so far
    for (auto* v : {&x_, &xb_, &xb2_, &q_}) v->resize(un * dim);
    hb_.resize(un * hidden);
    hb2_.resize(un * hidden);
    k_.resize(un * kv_dim);
    v_.resize(un * kv_dim);
  }
  float* x = x_.data();
  for (int b = 0; b < n; b++) {
    const float* row = m.embedding() + static_cast<size_t>(tokens[b]) * dim;
    std::copy(row, row + dim, x + static_cast<size_t>(b) * dim);
  }

  for (int l = 0; l < c.n_layers; l++) {
    const LlamaLayerWeights& w = m.layer(l);
    for (int b = 0; b < n; b++) rmsnorm(xb_.data() + b * dim, x + b * dim, w.rms_att, dim, c.rms_eps);

    const size_t loff = static_cast<size_t>(l) * n_ctx_ * kv_dim;
    matmul(q_.data(), xb_.data(), w.wq, dim, dim, n);
    matmul(k_.data(), xb_.data(), w.wk, dim, kv_dim, n);
    matmul(v_.data(), xb_.data(), w.wv, dim, kv_dim, n);

    for (int b = 0; b < n; b++) {
      const int p = pos + b;
      float* q = q_.data() + b * dim;
      float* k = k_.data() + b * kv_dim;
      // RoPE: rotate each (even, odd) pair of q and k by p · θ^(-head_dim / head_size).
      for (int i = 0; i < dim; i += 2) {
        const int head_dim = i % head_size;
        const float freq = 1.0f / std::pow(c.rope_theta, static_cast<float>(head_dim) /
                                                             static_cast<float>(head_size));
        const float val = static_cast<float>(p) * freq;
        const float fcr = std::cos(val);
        const float fci = std::sin(val);
        const int rotn = i < kv_dim ? 2 : 1;
        for (int r = 0; r < rotn; r++) {
          float* vec = r == 0 ? q : k;
          const float v0 = vec[i];
          const float v1 = vec[i + 1];
          vec[i] = v0 * fcr - v1 * fci;
          vec[i + 1] = v0 * fci + v1 * fcr;
        }
      }
      std::copy(k, k + kv_dim, key_cache_.data() + loff + static_cast<size_t>(p) * kv_dim);
      const float* v = v_.data() + b * kv_dim;
      std::copy(v, v + kv_dim, value_cache_.data() + loff + static_cast<size_t>(p) * kv_dim);
    }

    // Grouped-query attention of each token over positions 0..its own (causal).
    for (int b = 0; b < n; b++) {
      const int p = pos + b;
      for (int h = 0; h < c.n_heads; h++) {
        const float* qh = q_.data() + b * dim + h * head_size;
        float* att = att_.data() + static_cast<size_t>(h) * n_ctx_;
        for (int t = 0; t <= p; t++) {
          const float* kt =
              key_cache_.data() + loff + static_cast<size_t>(t) * kv_dim + (h / kv_mul) * head_size;
          float score = 0.0f;
          for (int i = 0; i < head_size; i++) score += qh[i] * kt[i];
          att[t] = score / std::sqrt(static_cast<float>(head_size));
        }
        softmax(att, p + 1);
        float* xbh = xb_.data() + b * dim + h * head_size;
        std::fill(xbh, xbh + head_size, 0.0f);
        for (int t = 0; t <= p; t++) {
          const float* vt =
              value_cache_.data() + loff + static_cast<size_t>(t) * kv_dim + (h / kv_mul) * head_size;
          const float a = att[t];
          for (int i = 0; i < head_size; i++) xbh[i] += a * vt[i];
        }
      }
    }
    matmul(xb2_.data(), xb_.data(), w.wo, dim, dim, n);
    for (size_t i = 0; i < un * dim; i++) x[i] += xb2_[i];

    // SwiGLU feed-forward: w2 · (silu(w1 · x) ⊙ (w3 · x)).
    for (int b = 0; b < n; b++) rmsnorm(xb_.data() + b * dim, x + b * dim, w.rms_ffn, dim, c.rms_eps);
    matmul(hb_.data(), xb_.data(), w.w1, dim, hidden, n);
    matmul(hb2_.data(), xb_.data(), w.w3, dim, hidden, n);
    for (size_t i = 0; i < un * hidden; i++) {
      float val = hb_[i];
      val *= (1.0f / (1.0f + std::exp(-val)));
      val *= hb2_[i];
      hb_[i] = val;
    }
    matmul(xb_.data(), hb_.data(), w.w2, hidden, dim, n);
    for (size_t i = 0; i < un * dim; i++) x[i] += xb_[i];
  }

  float* last = x + static_cast<size_t>(n - 1) * dim;
  rmsnorm(last, last, m.rms_final(), dim, c.rms_eps);
  matmul(logits_.data(), last, m.classifier(), dim, c.vocab_size);
  return logits_;
}

}  // namespace lockstep
