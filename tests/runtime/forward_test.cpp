// The forward pass's guarantees beyond the bundled model's greedy output: the logits do not
// depend on the thread count, on batching nor on the kernels' instruction set, the vector
// exp stays within a few ulp of std::exp, the thread pool covers every index once, and a
// random-weight model survives the trip through GGUF.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <cstring>
#include <limits>
#include <utility>
#include <span>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/generator.h"
#include "runtime/gguf.h"
#include "runtime/llama_kernel_table.h"
#include "runtime/llama_kernels.h"
#include "runtime/thread_pool.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

const std::string kModelDir = test_data::shared("models/stories260K").string();

// Head size 14 and widths that are not multiples of 16 reach every remainder loop.
LlamaConfig odd_shape() {
  LlamaConfig c;
  c.dim = 84, c.hidden_dim = 218, c.n_layers = 3, c.n_heads = 6, c.n_kv_heads = 2, c.vocab_size = 301, c.seq_len = 96;
  return c;
}

std::vector<int32_t> some_tokens(int32_t vocab, size_t n) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(static_cast<int32_t>((i * 7919 + 13) % static_cast<size_t>(vocab)));
  return ids;
}

// Logits after each token, one token per call.
std::vector<std::vector<float>> one_at_a_time(InferenceState& s, const std::vector<int32_t>& ids) {
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto l = s.forward(ids[i], static_cast<int32_t>(i));
    out.emplace_back(l.begin(), l.end());
  }
  return out;
}

TEST(Forward, LogitsDoNotDependOnTheThreadCount) {
  for (const auto& model : {load_model(kModelDir).model, random_llama_model(odd_shape(), 7)}) {
    const auto ids = some_tokens(model->config().vocab_size, 40);
    InferenceState one(model, 0, 1);
    ASSERT_EQ(one.threads(), 1);
    const auto expected = one_at_a_time(one, ids);
    for (int32_t threads : {2, 3, 5}) {
      InferenceState many(model, 0, threads);
      ASSERT_EQ(many.threads(), threads);
      EXPECT_EQ(one_at_a_time(many, ids), expected) << threads << " threads, dim " << model->config().dim;
      // Batched on several threads too: the last logits of a 40-token pass.
      InferenceState batched(model, 0, threads);
      const auto l = batched.forward(ids, 0);
      EXPECT_EQ(std::vector<float>(l.begin(), l.end()), expected.back()) << threads << " threads, batched";
    }
  }
}

TEST(Forward, BatchedEqualsOneTokenAtATimeOnEveryRemainderPath) {
  const auto model = random_llama_model(odd_shape(), 11);
  const auto ids = some_tokens(model->config().vocab_size, 37);
  InferenceState one(model, 0, 1), many(model, 0, 1);
  const auto expected = one_at_a_time(one, ids);
  // Batches of 1, 2, 3, … tokens: 1 + 2 + … + 8 = 36, then one more.
  size_t pos = 0;
  for (size_t n = 1; pos < ids.size(); ++n) {
    const size_t take = std::min(n, ids.size() - pos);
    const auto l = many.forward(std::span(ids).subspan(pos, take), static_cast<int32_t>(pos));
    pos += take;
    EXPECT_EQ(std::vector<float>(l.begin(), l.end()), expected[pos - 1]) << "batch ending at " << pos;
  }
}

TEST(Forward, GreedyOutputOnTwoThreadsIsLlama2cs) {
  GenerateOptions opt;
  opt.max_tokens = 200;
  opt.sampling.temperature = 0;
  opt.threads = 2;
  const GenerateResult r = generate(load_model(kModelDir), opt);
  const auto expected = nlohmann::json::parse(
      test_data::read_file(test_data::shared("models/stories260K/expected_greedy_200steps.ids.json")));
  EXPECT_EQ(r.tokens, expected["ids"].get<std::vector<int32_t>>());
}

TEST(Forward, AutomaticThreadsAreOneForSmallModels) {
  EXPECT_EQ(forward_threads(0, 100000), 1);
  EXPECT_EQ(forward_threads(3, 100000), 3);
  EXPECT_GE(forward_threads(0, size_t{1} << 24), 1);
  InferenceState s(load_model(kModelDir).model);
  EXPECT_EQ(s.threads(), 1);
}

TEST(Forward, VectorExpIsWithinThreeUlpOfStdExp) {
  using kernels::kWidth;
  using kernels::Vec;
  auto ulps = [](float a, float b) {
    int32_t ia, ib;
    std::memcpy(&ia, &a, 4);
    std::memcpy(&ib, &b, 4);
    return std::abs(static_cast<int64_t>(ia) - ib);
  };
  int64_t worst = 0;
  for (float x = -87.0f; x < 88.0f; x += 0.0137f) {
    float in[kWidth], out[kWidth];
    for (int k = 0; k < kWidth; ++k) in[k] = x + static_cast<float>(k) * 0.001f;
    Vec v;
    std::memcpy(&v, in, sizeof v);
    kernels::exp_lanes(v);
    std::memcpy(out, &v, sizeof v);
    for (int k = 0; k < kWidth; ++k) worst = std::max(worst, ulps(out[k], std::exp(in[k])));
  }
  EXPECT_LE(worst, 3);
  float in[kWidth];
  for (int k = 0; k < kWidth; ++k) in[k] = k == 0 ? std::numeric_limits<float>::quiet_NaN() : k == 1 ? -1e30f : 1e30f;
  Vec v;
  std::memcpy(&v, in, sizeof v);
  kernels::exp_lanes(v);
  float out[kWidth];
  std::memcpy(out, &v, sizeof v);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_GE(out[1], 0.0f);
  EXPECT_LT(out[1], 1e-37f);
  EXPECT_TRUE(std::isfinite(out[2]));
  EXPECT_GT(out[2], 1e38f);
}

TEST(Forward, EveryKernelTableComputesTheSameBits) {
  const kernels::KernelTable* avx2 = kernels::avx2_kernels();
  if (!avx2) GTEST_SKIP() << "no AVX2 kernels in this build, or no AVX2 on this CPU";
  const kernels::KernelTable& base = kernels::base_kernels();
  EXPECT_EQ(&kernels::best_kernels(), avx2);
  uint64_t state = 42;
  auto random = [&state](size_t n, float scale) {
    std::vector<float> v(n);
    for (auto& x : v) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      x = (static_cast<float>(state >> 40) * 0x1p-23f - 1.0f) * scale;
    }
    return v;
  };
  for (int n : {1, 5, 8, 13, 64, 100, 172}) {
    const int d = 23, batch = 3;
    const auto w = random(static_cast<size_t>(d) * n, 1), x = random(static_cast<size_t>(batch) * n, 1);
    for (auto [begin, end] : {std::pair{0, d}, std::pair{3, 20}, std::pair{5, 6}}) {
      std::vector<float> a(static_cast<size_t>(batch) * d), b(a.size());
      base.matmul_rows(a.data(), x.data(), w.data(), n, d, batch, begin, end);
      avx2->matmul_rows(b.data(), x.data(), w.data(), n, d, batch, begin, end);
      EXPECT_EQ(a, b) << "matmul n " << n << " rows " << begin << ".." << end;
      base.dots(a.data(), w.data(), static_cast<size_t>(n), x.data(), n - n / 3, begin, end);
      avx2->dots(b.data(), w.data(), static_cast<size_t>(n), x.data(), n - n / 3, begin, end);
      EXPECT_EQ(a, b) << "dots n " << n;
    }
    // Attention weights over d positions, each a row of n values.
    const auto att = random(static_cast<size_t>(d), 1);
    std::vector<float> a(static_cast<size_t>(n)), b(a.size());
    base.weighted_sum(a.data(), att.data(), 0.3f, w.data(), static_cast<size_t>(n), d, n);
    avx2->weighted_sum(b.data(), att.data(), 0.3f, w.data(), static_cast<size_t>(n), d, n);
    EXPECT_EQ(a, b) << "weighted sum n " << n;
    auto e1 = random(static_cast<size_t>(n), 30), e2 = e1;
    EXPECT_EQ(base.exp_shifted_sum(e1.data(), n, 2.5f), avx2->exp_shifted_sum(e2.data(), n, 2.5f)) << n;
    EXPECT_EQ(e1, e2) << "exp n " << n;
    auto g1 = random(static_cast<size_t>(n), 20), g2 = g1;
    const auto u = random(static_cast<size_t>(n), 2);
    base.swiglu(g1.data(), u.data(), n);
    avx2->swiglu(g2.data(), u.data(), n);
    EXPECT_EQ(g1, g2) << "swiglu n " << n;
  }
}

TEST(Forward, ThreadPoolCoversEveryIndexOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int n : {0, 1, 2, 3, 7, 64, 1001}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      for (int round = 0; round < 3; ++round) {
        pool.parallel_for(n, [&](int begin, int end) {
          for (int i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
        });
      }
      for (int i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 3) << threads << " threads, n " << n;
    }
  }
}

TEST(Forward, RandomModelsAreDeterministicAndRoundTripThroughGguf) {
  const auto a = random_llama_model(odd_shape(), 5), b = random_llama_model(odd_shape(), 5);
  const auto c = random_llama_model(odd_shape(), 6);
  const size_t n = static_cast<size_t>(odd_shape().dim) * odd_shape().dim;
  EXPECT_TRUE(std::equal(a->layer(1).wq, a->layer(1).wq + n, b->layer(1).wq));
  EXPECT_FALSE(std::equal(a->layer(1).wq, a->layer(1).wq + n, c->layer(1).wq));
  EXPECT_THROW(random_llama_model(LlamaConfig{}, 1), std::invalid_argument);

  // With the bundled tokenizer's 512 pieces as the vocabulary.
  LlamaConfig shape = odd_shape();
  shape.vocab_size = 512;
  const auto model = random_llama_model(shape, 3);
  const auto path = std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_random_llama.gguf");
  write_llama_gguf(*model, kModelDir + "/tok512.bin", "random", path.string());
  const LoadedModel loaded = load_model(path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(loaded.model->config().hidden_dim, shape.hidden_dim);
  EXPECT_EQ(loaded.tokenizer->size(), 512u);
  const auto ids = some_tokens(512, 12);
  InferenceState x(model, 0, 1), y(loaded.model, 0, 2);
  EXPECT_EQ(one_at_a_time(x, ids), one_at_a_time(y, ids));
}

}  // namespace
}  // namespace lockstep
