// Token healing on a real vocabulary (Llama 2's): a prompt that ends inside a word
// ("The url is http") continues with a token that crosses the prompt boundary (" https"),
// with and without a grammar. The model is a small random-weight llama with that
// vocabulary; a logit bias stands in for what a trained model would prefer.
#include <random>

#include <gtest/gtest.h>
#include <re2/re2.h>

#include "runtime/generator.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

LoadedModel random_model(std::shared_ptr<const Tokenizer> tok) {
  LlamaConfig c;
  c.dim = 8;
  c.hidden_dim = 16;
  c.n_layers = 1;
  c.n_heads = 2;
  c.n_kv_heads = 2;
  c.vocab_size = static_cast<int32_t>(tok->size());
  c.seq_len = 64;
  const size_t d = 8, h = 16, v = tok->size();
  auto w = std::make_shared<std::vector<float>>(v * d + d + 2 * d + 4 * d * d + 3 * h * d);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  for (float& x : *w) x = normal(rng);
  const float* p = w->data();
  auto take = [&](size_t n) {
    const float* at = p;
    p += n;
    return at;
  };
  const float* embedding = take(v * d);
  const float* rms_final = take(d);
  LlamaLayerWeights l{};
  l.rms_att = take(d);
  l.rms_ffn = take(d);
  l.wq = take(d * d);
  l.wk = take(d * d);
  l.wv = take(d * d);
  l.wo = take(d * d);
  l.w1 = take(h * d);
  l.w2 = take(d * h);
  l.w3 = take(h * d);
  LoadedModel m;
  m.model = std::make_shared<LlamaModel>(c, std::vector<LlamaLayerWeights>{l}, embedding, rms_final, embedding, w);
  m.tokenizer = std::move(tok);
  return m;
}

const LoadedModel& llama2_vocab_model() {
  static const LoadedModel m =
      random_model(load_tokenizer(test_data::shared("vocab/llama2/hf/tokenizer.json").string()));
  return m;
}

GenerateResult run(bool healing, std::shared_ptr<const GrammarAutomaton> grammar, int32_t favoured,
                   const std::string& prompt = "The url is http") {
  GenerateOptions o;
  o.prompt = prompt;
  o.max_tokens = 12;
  o.sampling.temperature = 0;
  o.sampling.logit_bias[favoured] = 1000.0f;
  o.token_healing = healing;
  o.grammar = std::move(grammar);
  return generate(llama2_vocab_model(), o);
}

TEST(TokenHealing, TheFirstTokenCrossesThePromptBoundary) {
  const Tokenizer& tok = *llama2_vocab_model().tokenizer;
  const std::vector<int32_t> prompt = tok.encode("The url is http", true);
  ASSERT_EQ(tok.token_bytes(prompt.back()), " http");
  const std::vector<int32_t> https = tok.encode_continuation(" https");
  ASSERT_EQ(https.size(), 1u);  // " https" is one token: the one a trained model writes here

  // Healed: " http" leaves the prompt and the first token " https" spells it again, plus "s".
  const GenerateResult healed = run(true, nullptr, https[0]);
  EXPECT_EQ(healed.healed_tokens, 1);
  EXPECT_EQ(healed.prompt_tokens, static_cast<int32_t>(prompt.size()) - 1);
  ASSERT_FALSE(healed.tokens.empty());
  EXPECT_EQ(healed.tokens[0], https[0]);
  EXPECT_EQ(healed.text.rfind("s", 0), 0u) << healed.text;

  // Not healed: the same token after " http" writes "http https".
  const GenerateResult plain = run(false, nullptr, https[0]);
  EXPECT_EQ(plain.healed_tokens, 0);
  EXPECT_EQ(plain.text.rfind(" https", 0), 0u) << plain.text;
}

// "The url is ht" ends in " h" "t": both go, as " http" and " https" start with " ht".
TEST(TokenHealing, SeveralTokensGoWhileALongerTokenStartsWithTheirBytes) {
  const Tokenizer& tok = *llama2_vocab_model().tokenizer;
  const std::vector<int32_t> prompt = tok.encode("The url is ht", true);
  ASSERT_EQ(tok.token_bytes(prompt[prompt.size() - 2]), " h");
  ASSERT_EQ(tok.token_bytes(prompt.back()), "t");
  const int32_t https = tok.encode_continuation(" https")[0];
  const GenerateResult r = run(true, nullptr, https, "The url is ht");
  EXPECT_EQ(r.healed_tokens, 2);
  ASSERT_FALSE(r.tokens.empty());
  EXPECT_EQ(r.tokens[0], https);
  EXPECT_EQ(r.text.rfind("tps", 0), 0u) << r.text;
}

TEST(TokenHealing, TheGrammarConstrainsWhatFollowsTheHealedBytes) {
  const Tokenizer& tok = *llama2_vocab_model().tokenizer;
  const int32_t https = tok.encode_continuation(" https")[0];
  // "s://…" continues the regex: the boundary-crossing token is allowed.
  const auto url = GrammarAutomaton::compile(parse_regex(R"(s://[a-z]{2,8}\.com)"));
  const GenerateResult r = run(true, url, https);
  ASSERT_FALSE(r.tokens.empty());
  EXPECT_EQ(r.tokens[0], https);
  // Digits do not: " https" is not allowed however much the model wants it, and the output
  // (after the re-spelled " http") is still a full match.
  const auto digits = GrammarAutomaton::compile(parse_regex("[0-9]{1,3}"));
  const GenerateResult d = run(true, digits, https);
  ASSERT_FALSE(d.tokens.empty());
  EXPECT_NE(d.tokens[0], https);
  EXPECT_TRUE(d.complete);
  EXPECT_TRUE(RE2::FullMatch(d.text, "[0-9]{1,3}")) << d.text;
}

}  // namespace
}  // namespace lockstep
