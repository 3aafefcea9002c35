// The `lockstep` binary on hostile input: unbounded files, every token banned, a grammar
// the vocabulary cannot follow — each a clear message and a non-zero exit, never output
// garbage or exit 0.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/runtime/cli_runner.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(HostileCli, InputFilesThatNeverEndAreRefusedQuickly) {
  for (const char* option : {"--grammar", "--schema", "--tools"}) {
    // Refused from the first 64 MiB read (a hang would hit ctest's timeout).
    expect_one_line_error(run_cli({"generate", option, "/dev/zero"}), "/dev/zero: file larger than the 64 MiB limit");
  }
  expect_one_line_error(run_cli({"generate", "--model", "/dev/zero"}), "/dev/zero: not a regular file");
  expect_one_line_error(run_cli({"generate", "--tokenizer", "/dev/zero"}), "/dev/zero: not a regular file");
  expect_one_line_error(run_cli({"tokenize", "--tokenizer", "/dev/zero", "a"}), "/dev/zero: not a regular file");
  const CliResult r = run_cli({"check", "--regex", "a", "--input-file", "/dev/zero"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "/dev/zero: error: file larger than the 64 MiB limit")) << r.err;
}

TEST(HostileCli, DeeplyNestedSchemasAreAnErrorNotAStackOverflow) {
  for (const auto& [open, close] : {std::pair<std::string, std::string>("[", "]"), {R"({"items": )", "}"}}) {
    std::string doc;
    for (int i = 0; i < 100000; ++i) doc += open;
    doc += "{}";
    for (int i = 0; i < 100000; ++i) doc += close;
    TempFile f("lockstep_hostile_deep.json", doc);
    expect_one_line_error(run_cli({"check", "--schema", f.path.string(), "--input", "{}"}),
                          f.path.string() + ": the JSON's nesting exceeds the limit nesting_depth = 500");
    expect_one_line_error(run_cli({"generate", "--tools", f.path.string()}), "nesting exceeds the limit nesting_depth = 500");
  }
}

TEST(HostileCli, EveryTokenBannedStopsWithExitThreeInsteadOfEmitting) {
  std::vector<std::string> args = {"generate", "--seed", "1", "--max-tokens", "20"};
  for (int id = 0; id < 512; ++id) {
    args.push_back("--logit-bias");
    args.push_back(std::to_string(id) + "=-inf");
  }
  for (const char* temperature : {"0.8", "0"}) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--temperature", temperature});
    const CliResult r = run_cli(a);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(contains(r.err, "stop: no token allowed")) << r.err;
    EXPECT_TRUE(contains(r.err, "no token of the vocabulary is allowed at byte offset 0 of the output")) << r.err;
  }
  // Under a grammar: the tokens it allows are all banned.
  TempFile g("lockstep_hostile_ab.gbnf", "root ::= [ab]+\n");
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--grammar", g.path.string()});
  const CliResult r = run_cli(a);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "no token of the vocabulary is allowed at byte offset 0")) << r.err;
  EXPECT_TRUE(contains(r.err, "the logit biases ban all it allows")) << r.err;
}

TEST(HostileCli, NonFiniteBiasesAreRejected) {
  expect_one_line_error(run_cli({"generate", "--logit-bias", "3=nan"}), "--logit-bias '3=nan': a bias is a finite number or -inf");
  expect_one_line_error(run_cli({"generate", "--logit-bias", "3=inf"}), "a bias is a finite number or -inf");
}

// A 512-token vocabulary (the bundled model's size) that has "a" but no "z" and no byte
// fallback, with "</s>" as its end-of-generation token.
struct NoZTokenizer {
  fs::path dir = fs::temp_directory_path() / ("lockstep_hostile_noz_" + std::to_string(::getpid()));
  std::string path = (dir / "tokenizer.json").string();
  NoZTokenizer() {
    nlohmann::json vocab = {{"</s>", 0}, {"a", 1}};
    for (int id = 2; id < 512; ++id) vocab["t" + std::to_string(id)] = id;
    const nlohmann::json tok = {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}},
                                {"added_tokens", {{{"id", 0}, {"content", "</s>"}, {"special", true}}}}};
    fs::create_directories(dir);
    std::ofstream(path) << tok.dump();
  }
  ~NoZTokenizer() { fs::remove_all(dir); }
};

TEST(HostileCli, GrammarTheVocabularyCannotFollowExitsThreeWithTheByteOffset) {
  NoZTokenizer tok;
  const std::string model = test_data::shared("models/stories260K/stories260K.bin").string();
  TempFile z("lockstep_hostile_z.gbnf", "root ::= \"z\"\n");
  TempFile az("lockstep_hostile_az.gbnf", "root ::= \"a\" \"z\"\n");
  const std::vector<std::string> base = {"generate", "--model", model, "--tokenizer", tok.path, "--prompt", "a", "--seed", "1"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_cli(a);
  };
  // Length-aware closing sees it before generating.
  CliResult r = run({"--grammar", z.path.string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "cannot spell the grammar's shortest output")) << r.err;
  // Without it, the first state allows no token: no output, exit 3, offset 0.
  r = run({"--grammar", z.path.string(), "--no-closing"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(contains(r.err, "no token of the vocabulary is allowed at byte offset 0 of the output")) << r.err;
  // After "a", nothing: offset 1.
  r = run({"--grammar", az.path.string(), "--no-closing", "--no-jump-forward"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out, "a");
  EXPECT_TRUE(contains(r.err, "no token of the vocabulary is allowed at byte offset 1 of the output")) << r.err;
  r = run({"--grammar", az.path.string(), "--no-closing", "--json"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stop"], "no token allowed");
  EXPECT_EQ(j["complete"], false);
}

}  // namespace
}  // namespace lockstep
