// runtime/llama_model.cpp — the llama forward pass (float32; matrices split over a thread
// pool by output rows).
//
// The operations of llama2.c's run.c, in the same sequence; the inner loops
// (llama_kernels.h) sum in 8 lanes and use a polynomial exp (docs/forward.md), and greedy decoding
// reproduces run.c's published outputs.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "runtime/llama_kernel_table.h"
#include "runtime/model.h"
#include "runtime/thread_pool.h"

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

}  // namespace

InferenceState::InferenceState(std::shared_ptr<const LlamaModel> model, int32_t n_ctx, int32_t threads)
    : model_(std::move(model)) {
  const auto& c = model_->config();
  layer_limit_ = c.n_layers;
  n_ctx_ = n_ctx > 0 ? std::min(n_ctx, c.seq_len) : std::min(c.seq_len, kDefaultMaxContext);
  const size_t per_layer = static_cast<size_t>(c.dim) * (2 * c.dim + 2 * c.kv_dim() + 3 * c.hidden_dim);
  pool_ = std::make_unique<ThreadPool>(forward_threads(threads, per_layer));
  att_.resize(static_cast<size_t>(c.n_heads) * n_ctx_);
  logits_.resize(c.vocab_size);
  const size_t cache = static_cast<size_t>(c.n_layers) * n_ctx_ * c.kv_dim();
  key_cache_.resize(cache);
  value_cache_.resize(cache);
  // RoPE: pair i of a head turns by pos · θ^(-2i / head_size).
  const int half = c.head_size() / 2;
  rope_freq_.resize(half);
  for (int i = 0; i < half; i++) {
    rope_freq_[i] = 1.0f / std::pow(c.rope_theta, static_cast<float>(2 * i) / static_cast<float>(c.head_size()));
  }
  rope_.resize(2 * static_cast<size_t>(half));
}

InferenceState::~InferenceState() = default;

int32_t InferenceState::threads() const { return pool_->size(); }

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

void InferenceState::copy_cache_from(const InferenceState& other, int32_t positions) {
  if (&other == this) return;
  if (other.model_ != model_ || other.n_ctx_ != n_ctx_) {
    throw std::invalid_argument("copy_cache_from: the states hold different models or context lengths");
  }
  if (positions < 0 || positions > n_ctx_) {
    throw std::out_of_range(fmt::format("copy_cache_from: {} positions; the context holds {}", positions, n_ctx_));
  }
  const LlamaConfig& c = model_->config();
  const size_t layer = static_cast<size_t>(n_ctx_) * c.kv_dim();
  const size_t used = static_cast<size_t>(positions) * c.kv_dim();
  for (size_t l = 0; l < static_cast<size_t>(c.n_layers); ++l) {
    std::copy_n(other.key_cache_.begin() + static_cast<std::ptrdiff_t>(l * layer), used,
                key_cache_.begin() + static_cast<std::ptrdiff_t>(l * layer));
    std::copy_n(other.value_cache_.begin() + static_cast<std::ptrdiff_t>(l * layer), used,
                value_cache_.begin() + static_cast<std::ptrdiff_t>(l * layer));
  }
}

std::span<const float> InferenceState::forward(int32_t token, int32_t pos) {
  return forward(std::span<const int32_t>(&token, 1), pos);
}

// Each output row of a matrix is one dot product (llama_kernels.h) computed by one thread,
// so neither the thread count nor the batch size changes a bit of the result.
std::span<const float> InferenceState::forward(std::span<const int32_t> tokens, int32_t pos) {
  run(tokens, pos, false);
  return logits_;
}

std::span<const float> InferenceState::forward_all(std::span<const int32_t> tokens, int32_t pos) {
  run(tokens, pos, true);
  return {all_logits_.data(), tokens.size() * static_cast<size_t>(model_->config().vocab_size)};
}

void InferenceState::set_layer_limit(int32_t layers) {
  const int32_t n = model_->config().n_layers;
  if (layers < 0 || layers > n) {
    throw std::out_of_range(fmt::format("a layer limit of {} is outside [0, {}] (0: every layer)", layers, n));
  }
  layer_limit_ = layers == 0 ? n : layers;
}

void InferenceState::run(std::span<const int32_t> tokens, int32_t pos, bool every_position) {
  const kernels::KernelTable& K = kernels::best_kernels();
  const auto matmul_rows = K.matmul_rows;
  const LlamaModel& m = *model_;
  const LlamaConfig& c = m.config();
  if (tokens.empty()) throw std::invalid_argument("forward: no tokens");
  for (size_t b = 0; b < tokens.size(); ++b) check(tokens[b], pos + static_cast<int32_t>(b));
  const int n = static_cast<int>(tokens.size());
  const int dim = c.dim, hidden = c.hidden_dim, head_size = c.head_size(), kv_dim = c.kv_dim();
  const int kv_mul = c.n_heads / c.n_kv_heads, half = head_size / 2;
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
  const float inv_sqrt_head = 1.0f / std::sqrt(static_cast<float>(head_size));
  ThreadPool& pool = *pool_;

  for (int l = 0; l < layer_limit_; l++) {
    const LlamaLayerWeights& w = m.layer(l);
    for (int b = 0; b < n; b++) rmsnorm(xb_.data() + b * dim, x + b * dim, w.rms_att, dim, c.rms_eps);

    // q, k and v in one split: rows [0, dim) of wq, then kv_dim of wk, then of wv.
    pool.parallel_for(dim + 2 * kv_dim, [&](int begin, int end) {
      const struct { float* out; const float* w; int d, first; } parts[] = {
          {q_.data(), w.wq, dim, 0}, {k_.data(), w.wk, kv_dim, dim}, {v_.data(), w.wv, kv_dim, dim + kv_dim}};
      for (const auto& p : parts) {
        const int lo = std::max(begin, p.first) - p.first, hi = std::min(end, p.first + p.d) - p.first;
        if (lo < hi) matmul_rows(p.out, xb_.data(), p.w, dim, p.d, n, lo, hi);
      }
    }, K.rows);

    const size_t loff = static_cast<size_t>(l) * n_ctx_ * kv_dim;
    for (int b = 0; b < n; b++) {
      const int p = pos + b;
      float* rope = rope_.data();
      if (l == 0 || n > 1) {  // one table per position, shared by the layers
        for (int i = 0; i < half; i++) {
          const float val = static_cast<float>(p) * rope_freq_[i];
          rope[2 * i] = std::cos(val);
          rope[2 * i + 1] = std::sin(val);
        }
      }
      float* q = q_.data() + b * dim;
      float* k = k_.data() + b * kv_dim;
      for (int i = 0; i < dim; i += 2) {
        const int pair = (i % head_size) / 2;
        const float fcr = rope[2 * pair], fci = rope[2 * pair + 1];
        const float q0 = q[i], q1 = q[i + 1];
        q[i] = q0 * fcr - q1 * fci;
        q[i + 1] = q0 * fci + q1 * fcr;
        if (i < kv_dim) {
          const float k0 = k[i], k1 = k[i + 1];
          k[i] = k0 * fcr - k1 * fci;
          k[i + 1] = k0 * fci + k1 * fcr;
        }
      }
      std::copy(k, k + kv_dim, key_cache_.data() + loff + static_cast<size_t>(p) * kv_dim);
      const float* v = v_.data() + b * kv_dim;
      std::copy(v, v + kv_dim, value_cache_.data() + loff + static_cast<size_t>(p) * kv_dim);
    }

    // Grouped-query attention of each token over positions 0..its own (causal), a head
    // per task.
    for (int b = 0; b < n; b++) {
      const int p = pos + b;
      pool.parallel_for(c.n_heads, [&](int h_begin, int h_end) {
        for (int h = h_begin; h < h_end; h++) {
          const float* qh = q_.data() + b * dim + h * head_size;
          float* att = att_.data() + static_cast<size_t>(h) * n_ctx_;
          const float* keys = key_cache_.data() + loff + (h / kv_mul) * head_size;
          K.dots(att, keys, kv_dim, qh, head_size, 0, p + 1);
          float max = -HUGE_VALF;
          for (int t = 0; t <= p; t++) {
            att[t] *= inv_sqrt_head;
            max = att[t] > max ? att[t] : max;
          }
          const float inv_sum = 1.0f / K.exp_shifted_sum(att, p + 1, max);
          const float* values = value_cache_.data() + loff + (h / kv_mul) * head_size;
          K.weighted_sum(xb_.data() + b * dim + h * head_size, att, inv_sum, values, kv_dim, p + 1,
                                head_size);
        }
      });
    }
    pool.parallel_for(dim, [&](int begin, int end) {
      matmul_rows(xb2_.data(), xb_.data(), w.wo, dim, dim, n, begin, end);
    }, K.rows);
    for (size_t i = 0; i < un * dim; i++) x[i] += xb2_[i];

    // SwiGLU feed-forward: w2 · (silu(w1 · x) ⊙ (w3 · x)).
    for (int b = 0; b < n; b++) rmsnorm(xb_.data() + b * dim, x + b * dim, w.rms_ffn, dim, c.rms_eps);
    pool.parallel_for(hidden, [&](int begin, int end) {
      matmul_rows(hb_.data(), xb_.data(), w.w1, dim, hidden, n, begin, end);
      matmul_rows(hb2_.data(), xb_.data(), w.w3, dim, hidden, n, begin, end);
      for (int b = 0; b < n; b++) {
        const size_t off = static_cast<size_t>(b) * hidden + begin;
        K.swiglu(hb_.data() + off, hb2_.data() + off, end - begin);
      }
    }, K.rows);
    pool.parallel_for(dim, [&](int begin, int end) {
      matmul_rows(xb_.data(), hb_.data(), w.w2, hidden, dim, n, begin, end);
    }, K.rows);
    for (size_t i = 0; i < un * dim; i++) x[i] += xb_[i];
  }

  // The classifier over the last position, or over every one (one matrix read for all).
  const int first = every_position ? 0 : n - 1;
  const int rows = n - first;
  float* out = x + static_cast<size_t>(first) * dim;
  for (int b = 0; b < rows; b++) rmsnorm(out + b * dim, out + b * dim, m.rms_final(), dim, c.rms_eps);
  hidden_ = {out, static_cast<size_t>(rows) * dim};
  float* dest = logits_.data();
  if (every_position) {
    all_logits_.resize(static_cast<size_t>(rows) * c.vocab_size);
    dest = all_logits_.data();
  }
  pool.parallel_for(c.vocab_size, [&](int begin, int end) {
    matmul_rows(dest, out, m.classifier(), dim, c.vocab_size, rows, begin, end);
  }, K.rows);
}

}  // namespace lockstep
