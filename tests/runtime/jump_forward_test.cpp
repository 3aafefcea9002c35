// Jump-forward on real vocabularies: every forced token sequence is the tokenizer's own
// encoding of its text, the matcher accepts it, and outputs with and without it are
// sentences of the same grammar — along random walks over tool calls, with Llama 3's and
// Llama 2's tokenizers and the mask engine standing in for the model.
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/matcher.h"
#include "runtime/jump_forward.h"
#include "runtime/tokenizer.h"
#include "schemas/tool_calls.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

std::shared_ptr<const GrammarAutomaton> travel_tools(JsonSchemaOptions::Whitespace ws) {
  const auto doc = nlohmann::ordered_json::parse(
      test_data::read_file(std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "examples/tools/travel.json"));
  JsonSchemaOptions o;
  o.whitespace = ws;
  o.max_whitespace = 2;
  return GrammarAutomaton::compile(compile_tool_calls(parse_tool_definitions(doc), o).grammar);
}

struct WalkStats {
  size_t tokens = 0, forced = 0, merged = 0;
};

// A walk as generate() runs it: forced tokens after each chosen one (possibly merging with
// it), then a random allowed token (end of generation only when nothing else is allowed).
void walk(const Tokenizer& tok, const std::shared_ptr<TokenMaskCache>& cache, bool jump, std::mt19937& rng,
          WalkStats& stats) {
  const Vocabulary& v = tok.vocabulary();
  EarleyMatcher m(cache);
  m.set_max_tokens(m.min_tokens_to_accept() + m.eog_tokens() + 40);
  std::vector<int32_t> out;
  std::vector<uint32_t> mask(v.bitmask_words());
  bool chosen_last = false;  // the last token was chosen (not forced): it may merge
  while (!m.is_terminated()) {
    if (jump) {
      const ForcedTokens f = forced_tokens(tok, m, chosen_last ? std::optional(out.back()) : std::nullopt);
      if (!f.tokens.empty()) {
        std::string text;
        for (int32_t id : f.tokens) text += tok.token_bytes(id);
        EXPECT_EQ(tok.encode_continuation(text), f.tokens) << "forced tokens are not the tokenizer's encoding of " << text;
        if (f.rollback) {
          EXPECT_EQ(text.rfind(tok.token_bytes(out.back()), 0), 0u) << "a merged token keeps its bytes first";
          m.rollback(1);
          out.pop_back();
          ++stats.merged;
        }
        for (int32_t id : f.tokens) {
          ASSERT_TRUE(m.accept_token(id)) << "the grammar rejects a forced token";
          out.push_back(id);
        }
        stats.forced += f.tokens.size();
      }
    }
    m.fill_next_token_bitmask(mask);
    std::vector<int32_t> text_ids, eog;
    for (size_t id = 0; id < v.size(); ++id) {
      if ((mask[id / 32] >> (id % 32)) & 1) (v.is_eog(static_cast<int32_t>(id)) ? eog : text_ids).push_back(static_cast<int32_t>(id));
    }
    const auto& pick = text_ids.empty() ? eog : text_ids;
    ASSERT_FALSE(pick.empty()) << "dead end";
    const int32_t id = pick[rng() % pick.size()];
    ASSERT_TRUE(m.accept_token(id));
    out.push_back(id);
    chosen_last = true;
  }
  stats.tokens += out.size();
  std::string text;
  for (int32_t id : out) {
    if (!v.is_eog(id)) text += tok.token_bytes(id);
  }
  EarleyParser fresh(cache->grammar());
  EXPECT_TRUE(fresh.advance(text) && fresh.accepting()) << text;
  const auto call = nlohmann::json::parse(text);  // a call: {"name", "arguments"}
  EXPECT_TRUE(call.contains("name") && call.contains("arguments")) << text;
}

class JumpForward : public testing::TestWithParam<std::string> {};

TEST_P(JumpForward, ForcedTokensAreTheTokenizersOwnEncoding) {
  const auto tok = load_tokenizer(test_data::shared("vocab/" + GetParam()).string());
  std::mt19937 rng(31);
  for (const auto ws : {JsonSchemaOptions::Whitespace::kCompact, JsonSchemaOptions::Whitespace::kFlexible}) {
    auto cache = std::make_shared<TokenMaskCache>(travel_tools(ws), tok->shared_vocabulary());
    WalkStats with, without;
    for (int w = 0; w < 6; ++w) {
      walk(*tok, cache, true, rng, with);
      walk(*tok, cache, false, rng, without);
      if (HasFatalFailure()) return;
    }
    std::printf("[ jump-forward ] %s, %s whitespace: %zu of %zu tokens forced (%.1f %%), %zu merged with the token before\n",
                GetParam().c_str(), ws == JsonSchemaOptions::Whitespace::kCompact ? "compact" : "flexible", with.forced,
                with.tokens, 100.0 * static_cast<double>(with.forced) / static_cast<double>(with.tokens), with.merged);
    if (ws == JsonSchemaOptions::Whitespace::kCompact) {
      EXPECT_GT(with.forced, 20u);
    }
    EXPECT_EQ(without.forced, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(RealVocabularies, JumpForward,
                         testing::Values("llama3-hf/tokenizer.json", "llama2/hf/tokenizer.json"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           return info.param.rfind("llama3", 0) == 0 ? std::string("Llama3") : std::string("Llama2");
                         });

}  // namespace
}  // namespace lockstep
