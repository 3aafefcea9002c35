// The fast mask equals the brute-force mask (each token's bytes fed to a fresh parser in
// the same state), bit for bit, at every step of random legal walks with random rollbacks,
// on every real vocabulary and every llama.cpp grammar.
#include <random>

#include <gtest/gtest.h>

#include "automata/matcher.h"
#include "runtime/tokenizer.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

// A parser fed the accepted history, then each token's bytes (and rolled back).
std::vector<uint32_t> brute_force_mask(const CompiledGrammar& g, const Vocabulary& v,
                                       const std::string& history, bool terminated) {
  std::vector<uint32_t> mask(v.bitmask_words(), 0);
  if (terminated) return mask;
  EarleyParser p(g);
  if (!p.advance(history)) ADD_FAILURE() << "history rejected";
  for (size_t id = 0; id < v.size(); ++id) {
    const auto i = static_cast<int32_t>(id);
    bool ok;
    if (v.is_eog(i)) {
      ok = p.accepting();
    } else if (v.is_control(i) || v.token_bytes(i).empty()) {
      ok = false;
    } else {
      ok = p.advance(v.token_bytes(i));
      if (ok) p.rollback(v.token_bytes(i).size());
    }
    if (ok) mask[id / 32] |= 1u << (id % 32);
  }
  return mask;
}

class MaskProperty : public testing::TestWithParam<std::string> {};

TEST_P(MaskProperty, FastMaskEqualsBruteForceAlongRandomWalks) {
  const auto tok = load_tokenizer(test_data::shared("vocab/" + GetParam()).string());
  const auto vocab = tok->shared_vocabulary();
  std::mt19937 rng(12345);
  size_t masks = 0;
  for (const auto& path : test_data::llama_cpp_grammar_files()) {
    SCOPED_TRACE(path.filename().string());
    const auto g = CompiledGrammar::compile(parse_gbnf(test_data::read_file(path)));
    auto cache = std::make_shared<TokenMaskCache>(g, vocab);
    GrammarMatcher m(cache);
    std::vector<uint32_t> mask(vocab->bitmask_words());
    std::vector<std::string> steps;  // bytes of each accepted step
    for (int step = 0; step < 24; ++step) {
      m.fill_next_token_bitmask(mask);
      std::string history;
      for (const auto& s : steps) history += s;
      ASSERT_EQ(mask, brute_force_mask(*g, *vocab, history, m.is_terminated())) << "step " << step;
      ++masks;
      std::vector<int32_t> allowed;
      for (size_t id = 0; id < vocab->size(); ++id) {
        if ((mask[id / 32] >> (id % 32)) & 1) allowed.push_back(static_cast<int32_t>(id));
      }
      if (allowed.empty()) break;
      const int32_t pick = allowed[rng() % allowed.size()];
      ASSERT_TRUE(m.accept_token(pick));
      steps.emplace_back(vocab->is_eog(pick) ? "" : std::string(vocab->token_bytes(pick)));
      if (step % 3 == 2) {
        const size_t n = 1 + rng() % m.num_steps();
        m.rollback(n);
        steps.resize(steps.size() - n);
      }
    }
  }
  RecordProperty("masks", static_cast<int>(masks));
  std::printf("[ property ] %s: %zu masks equal to brute force\n", GetParam().c_str(), masks);
  EXPECT_GT(masks, 100u);
}

INSTANTIATE_TEST_SUITE_P(RealVocabularies, MaskProperty,
                         testing::Values("llama2/tokenizer.bin", "llama3-hf/tokenizer.json",
                                         "qwen3-hf/tokenizer.json", "gpt2/encoder.json",
                                         "llama.cpp-ggml-vocab/ggml-vocab-deepseek-llm.gguf"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param.substr(0, info.param.find('/'));
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n + "_" + std::to_string(info.index);
                         });

}  // namespace
}  // namespace lockstep
