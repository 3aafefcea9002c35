// `generate`'s decoding flags as a user meets them: the new samplers, logit bias by text,
// --logprobs / --stats, and beam search, with their errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/runtime/cli_runner.h"

namespace lockstep {
namespace {

const std::string kModel = test_data::shared("models/stories260K").string();

CliResult generate(std::vector<std::string> extra, const std::string& max_tokens = "24") {
  std::vector<std::string> args = {"generate", "-m", kModel, "-p", "Once upon a", "-n", max_tokens};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

TEST(DecodingCli, TruncationSamplersAndMirostatRun) {
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--typical-p", "0.5"}, {"--epsilon-cutoff", "0.01"}, {"--eta-cutoff", "0.01"},
           {"--mirostat", "1"}, {"--mirostat", "2", "--mirostat-tau", "3", "--mirostat-eta", "0.2"}}) {
    std::vector<std::string> args = {"--seed", "3"};
    args.insert(args.end(), flags.begin(), flags.end());
    const CliResult r = generate(args);
    EXPECT_EQ(r.exit_code, 0) << flags[0] << ": " << r.err;
    EXPECT_FALSE(r.out.empty());
  }
  expect_one_line_error(generate({"--mirostat", "2", "--top-p", "0.9"}), "--top-p has no effect with --mirostat 2");
  EXPECT_EQ(generate({"--mirostat", "3"}).exit_code, 2);
  EXPECT_EQ(generate({"--typical-p", "0"}).exit_code, 2);
}

TEST(DecodingCli, LogitBiasByTextBansEveryTokenSpelledSo) {
  const CliResult plain = generate({"--temperature", "0"});
  ASSERT_EQ(plain.exit_code, 0);
  ASSERT_EQ(plain.out.rfind(" time", 0), 0u) << plain.out;  // greedy continues with " time"
  const CliResult banned = generate({"--temperature", "0", "--logit-bias", " time=-inf"});
  ASSERT_EQ(banned.exit_code, 0) << banned.err;
  EXPECT_NE(banned.out.rfind(" time", 0), 0u) << banned.out;
  // The same ban by id gives the same output.
  const CliResult ids = generate({"--temperature", "0", "--json"}, "1");
  const int id = nlohmann::json::parse(ids.out)["token_ids"][0];
  const CliResult by_id = generate({"--temperature", "0", "--logit-bias", std::to_string(id) + "=-inf"});
  EXPECT_EQ(by_id.out, banned.out);
  expect_one_line_error(generate({"--logit-bias", " Paris=-inf"}), "no token of the vocabulary is spelled \" Paris\"");
  expect_one_line_error(generate({"--logit-bias", "x=big"}), "'big' is not a number");
}

TEST(DecodingCli, LogprobsAndStatsInJson) {
  const CliResult r = generate({"--temperature", "0", "--json", "--logprobs", "2", "--stats"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& content = j["logprobs"]["content"];
  ASSERT_EQ(content.size(), j["tokens"].get<size_t>());
  for (const auto& t : content) {
    EXPECT_LE(t["logprob"].get<double>(), 0.0);
    ASSERT_EQ(t["top_logprobs"].size(), 2u);
    EXPECT_EQ(t["top_logprobs"][0]["id"], t["id"]);  // greedy: the chosen token is the top one
    EXPECT_TRUE(t.contains("bytes") && t.contains("masked_logprob"));
  }
  EXPECT_EQ(j["stats"]["tokens"], j["tokens"]);
  EXPECT_EQ(j["stats"]["grammar_override_share"], 0.0);
  const CliResult text = generate({"--temperature", "0", "--logprobs", "1", "--stats"});
  EXPECT_NE(text.err.find("type-token ratio"), std::string::npos) << text.err;
}

TEST(DecodingCli, BeamSearchReturnsKSequencesBestFirst) {
  const CliResult r = generate({"--beams", "3", "--num-return-sequences", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sequences"].size(), 3u);
  EXPECT_EQ(j["text"], j["sequences"][0]["text"]);
  EXPECT_GE(j["sequences"][0]["score"].get<double>(), j["sequences"][1]["score"].get<double>());
  EXPECT_GT(j["kv_cache_bytes"].get<size_t>(), 0u);
  expect_one_line_error(generate({"--beams", "2", "--temperature", "0.7"}), "--temperature has no effect with --beams");
  expect_one_line_error(generate({"--beams", "2", "--num-return-sequences", "3"}), "more than --beams 2");
  // Under a grammar the best sequence is complete.
  const CliResult g = generate({"--beams", "2", "--regex", "[a-z]+( [a-z]+){2}"}, "32");
  EXPECT_EQ(g.exit_code, 0) << g.err;
}

TEST(DecodingCli, SpeculativeDraftsKeepGreedyOutputAndReportAcceptance) {
  const CliResult plain = generate({"--temperature", "0", "--no-jump-forward"}, "64");
  ASSERT_EQ(plain.exit_code, 0);
  for (const auto& flags : std::vector<std::vector<std::string>>{{"--lookup-ngram", "2"}, {"--draft-layers", "3"}}) {
    std::vector<std::string> args = {"--temperature", "0", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    const CliResult r = generate(args, "64");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["text"], plain.out) << flags[0];
    EXPECT_GT(j["target_passes"].get<int>(), 0);
    EXPECT_LE(j["accepted_draft_tokens"].get<int>(), j["draft_tokens"].get<int>());
  }
  expect_one_line_error(generate({"--draft-layers", "99"}), "--draft-layers 99: the model has 5 layers");
  expect_one_line_error(generate({"--draft-layers", "1", "--lookup-ngram", "2"}), "give one of them");
  expect_one_line_error(generate({"--lookup-ngram", "2", "--token-healing"}), "does not heal tokens");
}

TEST(DecodingCli, GuidanceFlags) {
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--cfg-scale", "2", "--negative-prompt", "The dog"}, {"--penalty-alpha", "0.6"}}) {
    const CliResult r = generate(flags);
    EXPECT_EQ(r.exit_code, 0) << flags[0] << ": " << r.err;
    EXPECT_FALSE(r.out.empty());
  }
  // Contrastive search picks among --top-k candidates and draws nothing.
  expect_one_line_error(generate({"--penalty-alpha", "0.6", "--temperature", "0.5"}),
                        "--temperature has no effect with --penalty-alpha");
  expect_one_line_error(generate({"--penalty-alpha", "0.6", "--lookup-ngram", "2"}), "does not combine with a draft");
  expect_one_line_error(generate({"--cfg-scale", "2", "--beams", "2"}), "--cfg-scale has no effect with --beams");
  expect_one_line_error(generate({"--contrast-model", "/nonexistent/model.bin"}), "/nonexistent/model.bin");
}

}  // namespace
}  // namespace lockstep
