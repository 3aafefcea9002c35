// runtime/model.h — a llama-architecture transformer and its forward pass.
//
// Architecture (Touvron et al. 2023, "LLaMA"; as in llama2.c's run.c): token embedding →
// n_layers × [RMSNorm → grouped-query attention with rotary position embedding (Su et al.
// 2021) and a KV cache → residual → RMSNorm → SwiGLU feed-forward (Shazeer 2020) →
// residual] → final RMSNorm → classifier → logits: float[vocab_size].
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace lockstep {

struct LlamaConfig {
  int32_t dim = 0;         ///< embedding width
  int32_t hidden_dim = 0;  ///< feed-forward width
  int32_t n_layers = 0;
  int32_t n_heads = 0;     ///< query heads
  int32_t n_kv_heads = 0;  ///< key/value heads (GQA: n_heads % n_kv_heads == 0)
  int32_t vocab_size = 0;
  int32_t seq_len = 0;     ///< context length, tokens
  float rms_eps = 1e-5f;
  float rope_theta = 10000.0f;
  int32_t head_size() const { return dim / n_heads; }
  int32_t kv_dim() const { return dim * n_kv_heads / n_heads; }
};

/// Read-only weights of one layer, row-major float32, shapes in (rows, cols).
struct LlamaLayerWeights {
  const float* rms_att;  ///< (dim)
  const float* wq;       ///< (dim, dim)
  const float* wk;       ///< (kv_dim, dim)
  const float* wv;       ///< (kv_dim, dim)
  const float* wo;       ///< (dim, dim)
  const float* rms_ffn;  ///< (dim)
  const float* w1;       ///< (hidden_dim, dim) gate
  const float* w2;       ///< (dim, hidden_dim) down
  const float* w3;       ///< (hidden_dim, dim) up
};

class LlamaModel {
 public:
  LlamaModel(LlamaConfig config, std::vector<LlamaLayerWeights> layers, const float* embedding,
             const float* rms_final, const float* classifier, std::shared_ptr<const void> storage);

  const LlamaConfig& config() const { return config_; }
  /// Weight size in bytes (as float32).
  size_t parameter_count() const;

  const float* embedding() const { return embedding_; }    ///< (vocab_size, dim)
  const float* rms_final() const { return rms_final_; }    ///< (dim)
  const float* classifier() const { return classifier_; }  ///< (vocab_size, dim)
  const LlamaLayerWeights& layer(int32_t l) const { return layers_[static_cast<size_t>(l)]; }

 private:
  LlamaConfig config_;
  std::vector<LlamaLayerWeights> layers_;
  const float* embedding_;
  const float* rms_final_;
  const float* classifier_;
  std::shared_ptr<const void> storage_;  // keeps the mapped file or owned buffers alive
};

/// Loads a llama2.c checkpoint (legacy format: 7 × int32 header dim, hidden_dim,
/// n_layers, n_heads, n_kv_heads, vocab_size (negative: unshared classifier), seq_len;
/// then float32 weights, including the unused RoPE tables). The file is memory-mapped.
/// Throws ModelFormatError (with byte offset) on a bad header or a size that does not
/// match the header.
std::shared_ptr<const LlamaModel> load_llama2c_model(const std::string& path);

class GgufFile;

/// Loads a GGUF model of architecture `llama` (metadata llama.*: context_length,
/// embedding_length, block_count, feed_forward_length, attention.head_count(_kv),
/// attention.layer_norm_rms_epsilon, rope.freq_base; tensors token_embd, blk.N.attn_norm /
/// attn_q / attn_k / attn_v / attn_output / ffn_norm / ffn_gate / ffn_down / ffn_up,
/// output_norm, output (optional: tied to token_embd)). F32 tensors are used in place
/// (memory-mapped); F16, BF16 and Q8_0 are dequantized to float32 on load.
/// Throws ModelFormatError naming the key or tensor (and its offset).
std::shared_ptr<const LlamaModel> load_gguf_model(std::shared_ptr<const GgufFile> file);

/// Weight encodings `convert` writes.
enum class WeightType { kF32, kF16, kQ8_0 };

/// Writes a llama2.c checkpoint and its tokenizer.bin as a GGUF llama model with an SPM
/// vocabulary (tokens with U+2581 for spaces, scores, token types). 2-D weights are written
/// as `type` (Q8_0 needs rows of a multiple of 32 values, else F32); norms stay F32.
/// Throws like the loaders.
void convert_llama2c_to_gguf(const std::string& model_path, const std::string& tokenizer_path,
                             const std::string& out_path, WeightType type = WeightType::kF32);

/// Writes `model` as a GGUF llama model with the SPM vocabulary of the llama2.c tokenizer
/// at `tokenizer_path` (its size must be the model's vocab_size), as convert does.
void write_llama_gguf(const LlamaModel& model, const std::string& tokenizer_path, const std::string& name,
                      const std::string& out_path, WeightType type = WeightType::kF32);

/// A llama model of shape `config` with random weights, for benchmarks: matrices uniform in
/// ±1/√(columns), norms 1; the same `seed` gives the same weights on every machine
/// (splitmix64). Throws std::invalid_argument for an inconsistent shape.
std::shared_ptr<const LlamaModel> random_llama_model(const LlamaConfig& config, uint64_t seed);

class ThreadPool;

/// The mutable state of one sequence: KV cache, scratch buffers and the threads its
/// forward pass uses. One thread at a time may call it.
class InferenceState {
 public:
  /// Default KV-cache length when the caller does not choose one: the model's context,
  /// capped so that long-context models do not allocate gigabytes by default.
  static constexpr int32_t kDefaultMaxContext = 4096;
  /// `n_ctx`: tokens the KV cache holds (<= 0: min(seq_len, kDefaultMaxContext); at most
  /// seq_len). `threads`: threads of the forward pass, the caller's included (each matrix
  /// is split by output rows; every row is summed by one thread in the same order, so the
  /// logits do not depend on it); 0: automatic — one for a model whose layers hold under
  /// 2^20 weights (stories260K: the dispatch would cost more than it saves), else
  /// std::thread::hardware_concurrency().
  explicit InferenceState(std::shared_ptr<const LlamaModel> model, int32_t n_ctx = 0, int32_t threads = 0);
  ~InferenceState();
  int32_t context_length() const { return n_ctx_; }
  int32_t threads() const;
  /// Runs token `token` at position `pos` (0 <= pos < context_length(); positions before `pos`
  /// must already be in the KV cache) and returns logits: float[vocab_size], valid until
  /// the next call. Rolling back is calling forward() again at an earlier position.
  /// Throws std::out_of_range for a bad token or position.
  std::span<const float> forward(int32_t token, int32_t pos);
  /// Runs `tokens` at positions pos, pos + 1, … in one multi-position pass (each weight
  /// matrix is read once for all of them; a causal mask lets token i attend to positions
  /// up to pos + i) and returns the logits of the last one: float[vocab_size], valid until
  /// the next call. Bit-identical to calling forward() on each token in turn (same float
  /// accumulation order). Throws std::out_of_range for a bad token or a position past the
  /// context, std::invalid_argument for an empty list.
  std::span<const float> forward(std::span<const int32_t> tokens, int32_t pos);
  /// As forward(tokens, pos), but returns the logits of every position: float[tokens.size()
  /// × vocab_size], row i for tokens[i] (speculative decoding scores a draft's K tokens and
  /// the one after in one pass). Row i is bit-identical to forward() at that position.
  /// Valid until the next call.
  std::span<const float> forward_all(std::span<const int32_t> tokens, int32_t pos);
  /// Runs only the first `layers` layers, then the final norm and the classifier (0: every
  /// layer, the default): a self-speculative draft of the same model (Draft & Verify, Zhang
  /// et al. 2024; LayerSkip, Elhoushi et al. 2024) on a KV cache of its own. Throws
  /// std::out_of_range outside [0, n_layers].
  void set_layer_limit(int32_t layers);
  int32_t layer_limit() const { return layer_limit_; }
  /// The last hidden state (after the final RMSNorm, the classifier's input) of the last
  /// call's positions: float[dim] after forward(), float[tokens × dim] after forward_all().
  /// Valid until the next call. Contrastive search compares these.
  std::span<const float> hidden() const { return hidden_; }
  const LlamaModel& model() const { return *model_; }
  /// Copies the KV cache of positions [0, positions) from `other` (a state of the same model
  /// and context length): the state then continues the other's sequence (beam search forks a
  /// hypothesis this way). O(n_layers · positions · kv_dim). Throws std::invalid_argument for
  /// another model or context, std::out_of_range for positions outside [0, context_length()].
  void copy_cache_from(const InferenceState& other, int32_t positions);
  /// Bytes the KV cache holds: 2 · n_layers · context_length() · kv_dim · 4.
  size_t kv_cache_bytes() const { return (key_cache_.size() + value_cache_.size()) * sizeof(float); }

 private:
  void check(int32_t token, int32_t pos) const;
  void run(std::span<const int32_t> tokens, int32_t pos, bool every_position);
  std::shared_ptr<const LlamaModel> model_;
  int32_t n_ctx_;
  int32_t layer_limit_;
  std::vector<float> all_logits_;  // forward_all: (tokens, vocab_size)
  std::span<const float> hidden_;  // into x_: the normalized rows of the last call
  std::vector<float> x_, xb_, xb2_, hb_, hb2_, q_, k_, v_, att_, logits_;  // per token of a batch
  std::vector<float> key_cache_, value_cache_;  // (n_layers, n_ctx, kv_dim)
  std::vector<float> rope_freq_;  // (head_size / 2): θ^(-2i / head_size)
  std::vector<float> rope_;       // (head_size / 2) × (cos, sin) at the current position
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace lockstep
