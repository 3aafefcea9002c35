// `lockstep fuzz`: a grammar built to have each defect is reported as such (exit 1 for dead
// ends, end-of-generation traps and re-check disagreements; the rest with --strict), and a
// sound grammar exits 0. Real vocabularies where the defect can exist with them; a small
// tokenizer.json without byte fallback, written here, for the byte-level dead end.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/runtime/cli_runner.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

std::string llama3() { return test_data::shared("vocab/llama3-hf/tokenizer.json").string(); }
std::string llama2() { return test_data::shared("vocab/llama2/tokenizer.bin").string(); }

// A directory with a byte-less BPE tokenizer.json: tokens "a", "b", "ab", "c", " ", and
// "</s>" as end of generation (tokenizer_config.json beside it). No "z": it cannot be spelled.
struct SmallTokenizer {
  fs::path dir;
  SmallTokenizer() : dir(fs::temp_directory_path() / ("lockstep_fuzz_tok." + std::to_string(::getpid()))) {
    fs::create_directories(dir);
    std::ofstream(dir / "tokenizer.json") << R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "c": 3,
        " ": 4, "</s>": 5}, "merges": ["a b"]},
        "added_tokens": [{"id": 5, "content": "</s>", "special": true}]})";
    std::ofstream(dir / "tokenizer_config.json") << R"({"eos_token": "</s>"})";
  }
  ~SmallTokenizer() { fs::remove_all(dir); }
  std::string path() const { return (dir / "tokenizer.json").string(); }
};

struct Fuzzed {
  CliResult r;
  nlohmann::json report;
};

Fuzzed fuzz(const std::string& grammar_text, const std::string& tokenizer, std::vector<std::string> extra = {}) {
  TempFile g("lockstep_fuzz_" + std::to_string(::getpid()) + ".gbnf", grammar_text);
  std::vector<std::string> args = {"fuzz", "--grammar", g.path.string(), "--tokenizer", tokenizer, "--json",
                                   "--walks", "40", "--time-limit", "30"};
  args.insert(args.end(), extra.begin(), extra.end());
  Fuzzed f{run_cli(args), {}};
  if (f.r.exit_code == 0 || f.r.exit_code == 1) f.report = nlohmann::json::parse(f.r.out);
  return f;
}

TEST(Fuzz, ASoundGrammarExitsZero) {
  const Fuzzed f = fuzz("root ::= \"{\" [a-z]+ \"}\"\n", llama3());
  ASSERT_EQ(f.r.exit_code, 0) << f.r.out << f.r.err;
  EXPECT_TRUE(f.report["dead_ends"].empty());
  EXPECT_TRUE(f.report["eog_traps"].empty());
  EXPECT_TRUE(f.report["disagreements"].empty());
  EXPECT_GT(f.report["finished_walks"].get<int>(), 0);
}

TEST(Fuzz, AByteNoTokenSpellsIsADeadEnd) {
  SmallTokenizer tok;
  const Fuzzed f = fuzz("root ::= \"ab\" \"z\" \"c\"\n", tok.path());
  ASSERT_EQ(f.r.exit_code, 1) << f.r.out << f.r.err;
  ASSERT_EQ(f.report["dead_ends"].size(), 1u) << f.r.out;
  EXPECT_EQ(f.report["dead_ends"][0]["bytes"], "\"ab\"");
  EXPECT_EQ(f.report["dead_ends"][0]["next_bytes"], "'z'");
  EXPECT_EQ(f.report["dead_ends"][0]["tokens"], nlohmann::json({2}));  // the shortest way: the token "ab"
  // The text report names it too.
  const CliResult human = run_cli({"fuzz", "--regex", "abzc", "--tokenizer", tok.path(), "--walks", "5"});
  EXPECT_EQ(human.exit_code, 1);
  EXPECT_NE(human.out.find("dead ends: 1"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("the grammar allows next: 'z'"), std::string::npos) << human.out;
}

TEST(Fuzz, AStateReachableOnlyThroughASpecialTokenIsADeadEnd) {
  // "</s>" is spelled by the special token alone: a model writes it as a control token,
  // which no grammar allows, so after "a" nothing continues the output.
  SmallTokenizer tok;
  const Fuzzed f = fuzz("root ::= \"a\" \"</s>\" \"c\"\n", tok.path());
  ASSERT_EQ(f.r.exit_code, 1) << f.r.out << f.r.err;
  ASSERT_EQ(f.report["dead_ends"].size(), 1u) << f.r.out;
  EXPECT_EQ(f.report["dead_ends"][0]["bytes"], "\"a\"");
  EXPECT_EQ(f.report["dead_ends"][0]["next_bytes"], "'<'");
  EXPECT_EQ(f.report["dead_ends"][0]["special_tokens_spelling_next"], nlohmann::json({5}));
  const CliResult human = run_cli({"fuzz", "--regex", "a</s>c", "--tokenizer", tok.path(), "--walks", "5"});
  EXPECT_EQ(human.exit_code, 1);
  EXPECT_NE(human.out.find("only special tokens spell it: 5:</s>"), std::string::npos) << human.out;
}

TEST(Fuzz, WalksAreNotClosedWhenTheShortestOutputExceedsMaxSteps) {
  SmallTokenizer tok;  // "c c c c": 7 tokens of text and the end of generation
  const Fuzzed f = fuzz("root ::= \"c c c c\"\n", tok.path(), {"--max-steps", "4"});
  ASSERT_EQ(f.r.exit_code, 0) << f.r.out << f.r.err;
  EXPECT_EQ(f.report["min_tokens"], 8);
  EXPECT_EQ(f.report["closed_walks"], 0);
  EXPECT_EQ(f.report["finished_walks"], 0);
  const CliResult human = run_cli({"fuzz", "--regex", "c c c c", "--tokenizer", tok.path(), "--max-steps", "4"});
  EXPECT_NE(human.out.find("no walk was closed: the shortest output needs 8 tokens"), std::string::npos) << human.out;
  EXPECT_EQ(fuzz("root ::= \"c c c c\"\n", tok.path(), {"--max-steps", "8"}).report["closed_walks"], 20);
}

TEST(Fuzz, AnOptionalTailNoTokenSpellsIsAnEndOfGenerationTrap) {
  SmallTokenizer tok;
  const Fuzzed f = fuzz("root ::= \"a\" \"zz\"?\n", tok.path());
  ASSERT_EQ(f.r.exit_code, 1) << f.r.out << f.r.err;
  EXPECT_TRUE(f.report["dead_ends"].empty());
  ASSERT_EQ(f.report["eog_traps"].size(), 1u) << f.r.out;
  EXPECT_EQ(f.report["eog_traps"][0]["bytes"], "\"a\"");
}

TEST(Fuzz, UnreachableRulesAreReportedWithTheirLineAndColumn) {
  const std::string g = "root ::= \"x\" item\nitem ::= [0-9]\n  unused ::= \"y\"\n";
  const Fuzzed f = fuzz(g, llama3());
  ASSERT_EQ(f.r.exit_code, 0) << f.r.err;  // a warning: fails only with --strict
  ASSERT_EQ(f.report["unreachable_rules"].size(), 1u) << f.r.out;
  EXPECT_EQ(f.report["unreachable_rules"][0], nlohmann::json({{"rule", "unused"}, {"line", 3}, {"column", 3}}));
  EXPECT_EQ(fuzz(g, llama3(), {"--strict"}).r.exit_code, 1);
}

TEST(Fuzz, ARuleThatCanNeverFinishIsUnproductive) {
  // The root does without it: a warning at compile time, a finding here.
  const std::string g = "root ::= \"a\" | loop\nloop ::= \"b\" loop\n";
  const Fuzzed f = fuzz(g, llama2());
  ASSERT_EQ(f.r.exit_code, 0) << f.r.err;
  EXPECT_NE(f.r.err.find(":2:1: warning: rule 'loop' can never finish"), std::string::npos) << f.r.err;
  ASSERT_EQ(f.report["unproductive_rules"].size(), 1u) << f.r.out;
  EXPECT_EQ(f.report["unproductive_rules"][0], nlohmann::json({{"rule", "loop"}, {"line", 2}, {"column", 1}}));
  EXPECT_EQ(fuzz(g, llama2(), {"--strict"}).r.exit_code, 1);
}

TEST(Fuzz, TokensNoStateAllowsAreNeverAllowedExactly) {
  // Lower-case letters only, on Llama 3: every token with a digit is never allowed, and the
  // breadth-first pass covers the grammar's finitely many configurations.
  const Fuzzed f = fuzz("root ::= [a-z]+\n", llama3());
  ASSERT_EQ(f.r.exit_code, 0) << f.r.err;
  EXPECT_TRUE(f.report["never_allowed_tokens"]["exact"].get<bool>());
  const auto& ids = f.report["never_allowed_tokens"]["ids"];
  const auto has = [&](int id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  EXPECT_TRUE(has(15));    // "0"
  EXPECT_TRUE(has(717));   // "12"
  EXPECT_FALSE(has(64));   // "a"
}

TEST(Fuzz, TextThatIsASpecialTokenIsANonCanonicalForcedPath) {
  const Fuzzed f = fuzz("root ::= \"say <|eot_id|>\"\n", llama3());
  ASSERT_EQ(f.r.exit_code, 0) << f.r.err;
  ASSERT_EQ(f.report["non_canonical"]["refused"].size(), 1u) << f.r.out;
  EXPECT_EQ(f.report["non_canonical"]["refused"][0]["canonical"], nlohmann::json({128009}));
  EXPECT_EQ(fuzz("root ::= \"say <|eot_id|>\"\n", llama3(), {"--strict"}).r.exit_code, 1);
}

TEST(Fuzz, RegexWalksAreRecheckedWithRe2OnLlama2) {
  const CliResult r = run_cli({"fuzz", "--regex", "[a-c]{2,4}@[a-z]+\\.(com|org)", "--tokenizer", llama2(), "--walks",
                               "50", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["rechecks"], nlohmann::json({"earley", "re2"}));
  EXPECT_GT(report["finished_walks"].get<int>(), 0);
  EXPECT_TRUE(report["disagreements"].empty());
}

TEST(Fuzz, ModelWeightedWalksOverToolCallsFinishUnderClosingAndPassTheRecheck) {
  const std::string tools = std::string(LOCKSTEP_SOURCE_DIR) + "/examples/tools/travel.json";
  const std::string model = test_data::shared("models/stories260K").string();
  const CliResult r = run_cli({"fuzz", "--tools", tools, "--model", model, "--walks", "10", "--max-steps", "200",
                               "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["rechecks"], nlohmann::json({"earley", "json", "ajv"})) << report["ajv_skipped"];
  EXPECT_EQ(report["closed_walks"], 5);
  EXPECT_GE(report["finished_walks"].get<int>(), 5);  // every closed walk ends complete
  EXPECT_TRUE(report["disagreements"].empty());
}

// A schema's finished walks go to ajv (tests/node, installed by scripts/install-deps.sh).
TEST(Fuzz, SchemaWalksAreValidatedByAjv) {
  TempFile schema("lockstep_fuzz_schema_" + std::to_string(::getpid()) + ".json",
                  R"({"type":"object","properties":{"id":{"type":"integer","minimum":3},
                      "tags":{"type":"array","items":{"enum":["x","y"]},"maxItems":2}},"required":["id"]})");
  const CliResult r = run_cli({"fuzz", "--schema", schema.path.string(), "--tokenizer", llama3(), "--walks", "30",
                               "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report["rechecks"], nlohmann::json({"earley", "json", "ajv"})) << report["ajv_skipped"];
  EXPECT_GT(report["finished_walks"].get<int>(), 0);
  EXPECT_TRUE(report["disagreements"].empty());
}

// What ajv refuses is a disagreement (exit 1) with its reason; without ajv the report says
// why it did not run. A stand-in validator in $LOCKSTEP_AJV_DIR refuses every other text.
TEST(Fuzz, WhatAjvRefusesIsADisagreementAndAMissingAjvIsSaid) {
  const fs::path dir = fs::temp_directory_path() / ("lockstep_fuzz_ajv." + std::to_string(::getpid()));
  fs::create_directories(dir / "node_modules/ajv");
  std::ofstream(dir / "node_modules/ajv/package.json") << "{}";
  std::ofstream(dir / "validate_texts.js") << R"(const fs = require('fs');
const lines = fs.readFileSync(process.argv[4], 'utf8').split('\n').filter((l) => l);
lines.forEach((l, index) => { if (index % 2 === 0) console.log(JSON.stringify({index, error: 'refused ' + process.argv[2]})); });
console.log(JSON.stringify({checked: lines.length}));
)";
  TempFile schema("lockstep_fuzz_schema2_" + std::to_string(::getpid()) + ".json", R"({"enum":[1,2,3]})");
  const std::vector<std::string> args = {"fuzz", "--schema", schema.path.string(), "--tokenizer", llama3(),
                                         "--walks", "6", "--json"};
  ::setenv("LOCKSTEP_AJV_DIR", dir.c_str(), 1);
  const CliResult refused = run_cli(args);
  ::setenv("LOCKSTEP_AJV_DIR", (dir / "absent").c_str(), 1);
  const CliResult skipped = run_cli(args);
  ::unsetenv("LOCKSTEP_AJV_DIR");
  fs::remove_all(dir);

  ASSERT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  const auto r = nlohmann::json::parse(refused.out);
  ASSERT_FALSE(r["disagreements"].empty());
  EXPECT_EQ(r["disagreements"].size(), (r["finished_walks"].get<size_t>() + 1) / 2);
  EXPECT_EQ(r["disagreements"][0]["checker"], "ajv");
  EXPECT_EQ(r["disagreements"][0]["why"], "refused schema");

  ASSERT_EQ(skipped.exit_code, 0) << skipped.out << skipped.err;
  const auto s = nlohmann::json::parse(skipped.out);
  EXPECT_EQ(s["rechecks"], nlohmann::json({"earley", "json"}));
  EXPECT_NE(s["ajv_skipped"].get<std::string>().find("ajv is not installed in"), std::string::npos) << s["ajv_skipped"];
}

TEST(Fuzz, UsageErrorsExitTwo) {
  expect_one_line_error(run_cli({"fuzz", "--regex", "a"}), "give the vocabulary to fuzz against");
  expect_one_line_error(run_cli({"fuzz", "--tokenizer", llama3()}), "give the grammar to fuzz");
  expect_one_line_error(run_cli({"fuzz", "--regex", "a", "--tokenizer", llama3(), "--max-steps", "0"}),
                        "--max-steps: 0 is outside");
}

}  // namespace
}  // namespace lockstep
