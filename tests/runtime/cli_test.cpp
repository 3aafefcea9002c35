// The `lockstep` binary as a user runs it: outputs, exit codes, one-line errors.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "tests/runtime/cli_runner.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

TEST(Cli, GreedyGenerationPrintsLlama2cOutputExactly) {
  const CliResult r = run_cli({"generate", "--temperature", "0", "--max-tokens", "200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, test_data::read_file(
                       test_data::shared("models/stories260K/expected_greedy_200steps.txt")));
  EXPECT_NE(r.err.find("200 tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tokens/s"), std::string::npos) << r.err;
}

TEST(Cli, GrammarOutputDoesNotRepeatThePrompt) {
  const CliResult r = run_cli({"generate", "--grammar",
                               test_data::shared("grammars/llama.cpp/chess.gbnf").string(),
                               "--seed", "1", "--prompt", "Once upon a time"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("1. ", 0), 0u) << r.out;
}

TEST(Cli, MalformedGrammarIsOneLineWithFileLineColumn) {
  TempFile g("lockstep_bad.gbnf", "root ::= \"a\" item\nitem ::= [a-z\n");
  expect_one_line_error(run_cli({"generate", "--grammar", g.path.string()}),
                        g.path.string() + ":2:14: unterminated character class");
  TempFile u("lockstep_undef.gbnf", "root ::= \"a\" missing\n");
  expect_one_line_error(run_cli({"generate", "--grammar", u.path.string()}),
                        u.path.string() + ":1:14: undefined rule 'missing'");
  expect_one_line_error(run_cli({"generate", "--grammar", "/nonexistent.gbnf"}),
                        "/nonexistent.gbnf: cannot open");
}

TEST(Cli, BadModelFilesAreOneLineWithTheByteOffset) {
  const std::string model = test_data::read_file(test_data::shared("models/stories260K/stories260K.bin"));
  const auto dir = std::filesystem::temp_directory_path() / "lockstep_cli_model";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(test_data::shared("models/stories260K/tok512.bin"), dir / "tok512.bin",
                             std::filesystem::copy_options::overwrite_existing);
  {
    std::ofstream(dir / "stories260K.bin", std::ios::binary) << model.substr(0, 1000);
    expect_one_line_error(run_cli({"generate", "--model", dir.string()}),
                          "stories260K.bin: byte offset 1000: file is 1000 bytes");
  }
  {
    std::ofstream(dir / "stories260K.bin", std::ios::binary) << model << "extra";
    expect_one_line_error(run_cli({"generate", "--model", dir.string()}), "implies 1056540 bytes");
  }
  {
    std::ofstream(dir / "stories260K.bin", std::ios::binary) << model;
    std::filesystem::remove(dir / "tok512.bin");
    expect_one_line_error(run_cli({"generate", "--model", dir.string()}),
                          "no tokenizer beside the model");
    expect_one_line_error(
        run_cli({"generate", "--model", dir.string(), "--tokenizer", "/nonexistent/tok.bin"}),
        "/nonexistent/tok.bin: no such tokenizer file");
  }
  {
    const std::string tok = test_data::read_file(test_data::shared("models/stories260K/tok512.bin"));
    std::ofstream(dir / "tok512.bin", std::ios::binary) << tok.substr(0, 2000);
    expect_one_line_error(run_cli({"generate", "--model", dir.string()}), "tok512.bin: byte offset");
  }
  std::filesystem::remove_all(dir);
}

TEST(Cli, TokenizePrintsIdsOrIdAndBytes) {
  const std::string llama3 = test_data::shared("vocab/llama3-hf/tokenizer.json").string();
  CliResult r = run_cli({"tokenize", "--tokenizer", llama3, "--ids", "Hello world"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "9906 1917\n");
  r = run_cli({"tokenize", "--tokenizer", llama3, "Hello world\n"});
  EXPECT_EQ(r.out, "9906\tHello\n1917\t world\n198\t\\n\n");
  r = run_cli({"tokenize", "--tokenizer", llama3, "--bos", "--ids", "Hi"});
  EXPECT_EQ(r.out, "128000 13347\n");
  r = run_cli({"tokenize", "--tokenizer", llama3, "--special", "--ids", "<|eot_id|>"});
  EXPECT_EQ(r.out, "128009\n");
  r = run_cli({"tokenize", "--tokenizer", llama3, "--ids", "<|eot_id|>"});
  EXPECT_NE(r.out, "128009\n");  // without --special, the text is text
  expect_one_line_error(run_cli({"tokenize", "--tokenizer", "/nonexistent.json", "x"}),
                        "/nonexistent.json: no such tokenizer file");
  TempFile bad("lockstep_bad_tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": [1]}}");
  expect_one_line_error(run_cli({"tokenize", "--tokenizer", bad.path.string(), "x"}),
                        "/model/vocab: the vocabulary has the wrong type (array)");
}

TEST(Cli, ConvertThenGenerateFromGguf) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string out = (dir / ("lockstep_cli_" + std::to_string(::getpid()) + ".gguf")).string();
  const auto m = test_data::shared("models/stories260K");
  CliResult r = run_cli({"convert", "--model", (m / "stories260K.bin").string(), "--tokenizer",
                         (m / "tok512.bin").string(), "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli({"generate", "--model", out, "--temperature", "0", "--max-tokens", "200"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, test_data::read_file(m / "expected_greedy_200steps.txt"));
  // A truncated GGUF: one error line with the byte offset.
  const std::string bytes = test_data::read_file(out);
  std::ofstream(out, std::ios::binary | std::ios::trunc) << bytes.substr(0, 600000);
  expect_one_line_error(run_cli({"generate", "--model", out}), "runs past the end of the file");
  std::filesystem::remove(out);
}

TEST(Cli, CheckAndGenerateWithARegex) {
  CliResult r = run_cli({"check", "--regex", "[0-9]{3}-[0-9]{4}", "--input", "555-1234"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "accepted\n");
  r = run_cli({"check", "--regex", "[0-9]{3}-[0-9]{4}", "--input", "555-12x4"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("at byte 6"), std::string::npos) << r.out;
  r = run_cli({"check", "--regex", "[0-9]{3}-[0-9]{4}", "--input", "555-12"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("incomplete"), std::string::npos) << r.out;
  expect_one_line_error(run_cli({"check", "--regex", "[z-a]", "--input", "x"}),
                        "--regex:1:2: character range 'z-a' is out of order");
  expect_one_line_error(run_cli({"generate", "--regex", "a(?=b)"}), "--regex:1:2: lookaround");
  r = run_cli({"generate", "--regex", "[0-9]{3}-[0-9]{3}-[0-9]{4}", "--seed", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(re2::RE2::FullMatch(r.out, "[0-9]{3}-[0-9]{3}-[0-9]{4}")) << r.out;
  TempFile g("lockstep_check.gbnf", "root ::= \"a\"+\n");
  EXPECT_EQ(run_cli({"check", "--grammar", g.path.string(), "--input", "aaa"}).exit_code, 0);
  expect_one_line_error(run_cli({"check", "--grammar", g.path.string(), "--regex", "a", "--input", "a"}),
                        "give one of --grammar, --regex, --schema and --tools");
}

TEST(Cli, OutOfRangeValuesAreErrorsWithTheAllowedRange) {
  expect_one_line_error(run_cli({"generate", "--temperature", "-1"}), "--temperature: -1 is outside [0, ∞]");
  expect_one_line_error(run_cli({"generate", "--top-p", "2"}), "--top-p: 2 is outside (0, 1]");
  expect_one_line_error(run_cli({"generate", "--top-p", "0"}), "--top-p: 0 is outside (0, 1]");
  expect_one_line_error(run_cli({"generate", "--top-k", "-5"}), "--top-k: -5 is outside [0,");
  expect_one_line_error(run_cli({"generate", "--ctx-size", "-3"}), "--ctx-size: -3 is outside [0,");
  expect_one_line_error(run_cli({"generate", "--max-tokens", "-5"}), "--max-tokens: -5 is outside [-1,");
  expect_one_line_error(run_cli({"generate", "--min-p", "1.5"}), "--min-p: 1.5 is outside [0, 1]");
  expect_one_line_error(run_cli({"generate", "--max-whitespace", "-2"}), "--max-whitespace");
  expect_one_line_error(run_cli({"generate", "--max-tokens", "many"}), "--max-tokens");
  expect_one_line_error(run_cli({"generate", "--logit-bias", "99999=1"}), "outside the vocabulary");
}

TEST(Cli, VersionUnknownCommandsAndNoCommand) {
  CliResult r = run_cli({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  // The allocator line: mimalloc in the default build, the C library's under the sanitizers.
  EXPECT_TRUE(RE2::FullMatch(r.out, "lockstep \\d+\\.\\d+\\.\\d+\nallocator: (mimalloc \\d+\\.\\d+\\.\\d+|the C library's malloc)\n"))
      << r.out;
  expect_one_line_error(run_cli({"generat"}), "unknown command 'generat' (commands: generate, tokenize");
  r = run_cli({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Subcommands:"), std::string::npos) << r.err;
}

// Exit 0 only for a complete output; a budget the grammar cannot close within is exit 3
// before anything is generated, with the minimum in the message.
TEST(Cli, GenerateExitCodesAndJson) {
  CliResult r = run_cli({"generate", "--regex", "[a-z]{10}", "--max-tokens", "3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("needs 11 tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("raise it to 11 or more"), std::string::npos) << r.err;
  r = run_cli({"generate", "--regex", "[a-z]{10}", "--max-tokens", "11", "--seed", "4", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(RE2::FullMatch(j.at("text").get<std::string>(), "[a-z]{10}")) << r.out;
  EXPECT_EQ(j.at("complete"), true);
  EXPECT_EQ(j.at("stop"), "end of generation");
  EXPECT_LE(j.at("tokens").get<int>(), 11);
  // The ids, one per token, ending with an end-of-generation id (tok512.bin: BOS 1 or EOS 2,
  // as llama2.c's run.c ends a sequence at either).
  const auto ids = j.at("token_ids").get<std::vector<int32_t>>();
  ASSERT_EQ(ids.size(), j.at("tokens").get<size_t>());
  EXPECT_TRUE(ids.back() == 1 || ids.back() == 2) << ids.back();
  for (const char* key : {"forced_tokens", "forced_share", "generate_seconds", "prompt_tokens", "seed", "budget"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  // Piped stdout gets the completion's bytes only, no newline added.
  r = run_cli({"generate", "--regex", "[0-9]{4}", "--seed", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(RE2::FullMatch(r.out, "[0-9]{4}")) << r.out;
}

// On a terminal the completion is followed by a newline (the shell's prompt starts on its
// own line); into a pipe it is the completion's bytes alone (GenerateExitCodesAndJson).
TEST(Cli, ATerminalGetsANewlineAfterTheCompletion) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "util-linux's script is not installed";
  const std::string out = (std::filesystem::temp_directory_path() / ("lockstep_tty." + std::to_string(::getpid()))).string();
  const std::string cmd = "script -qc " + quote(quote(LOCKSTEP_CLI) + " generate --regex '[0-9]{3}' --seed 1 2>/dev/null") +
                          " /dev/null > " + quote(out) + " </dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const std::string tty = test_data::read_file(out);
  std::filesystem::remove(out);
  EXPECT_TRUE(RE2::FullMatch(tty, "[0-9]{3}\\r?\\n")) << tty;
}

TEST(Cli, GenerationBoundsUnboundedWhitespaceRulesAndSaysSo) {
  const std::string g = test_data::shared("grammars/llama.cpp/arithmetic.gbnf").string();
  CliResult r = run_cli({"generate", "--grammar", g, "--seed", "3", "--max-tokens", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: generation limits whitespace rule 'ws' to runs of 8"), std::string::npos) << r.err;
  r = run_cli({"generate", "--grammar", g, "--seed", "3", "--max-tokens", "64", "--max-whitespace", "-1"});
  EXPECT_EQ(r.err.find("note:"), std::string::npos) << r.err;
  // check keeps the grammar's own language: a run of 30 spaces is fine there.
  r = run_cli({"check", "--grammar", g, "--input", "x =" + std::string(30, ' ') + "1\n"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// Tool calls generated by the bundled model, validated by ajv (npm; installed by
// scripts/install-deps.sh) against the chosen tool's own schema. The tiny model writes
// stories into strings; a repetition penalty keeps its strings short enough to end within
// its 512-token context, and no additional properties keeps the call to the tool's own.
TEST(Cli, GeneratedToolCallsValidateWithAjv) {
  ASSERT_TRUE(std::filesystem::exists(std::filesystem::path(LOCKSTEP_SOURCE_DIR) /
                                      "tests/node/node_modules/ajv/package.json"))
      << "ajv is missing: run scripts/install-deps.sh";
  const std::string tools = test_data::shared("toolcalls/mcp_tools_list_snapshots/cloudflare-radar.json").string();
  std::set<std::string> names;
  for (int seed = 1; seed <= 20; ++seed) {
    const CliResult r = run_cli({"generate", "--tools", tools, "--whitespace", "compact", "--no-additional-properties",
                                 "--repeat-penalty", "1.3", "--seed", std::to_string(seed)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("stop: end of generation"), std::string::npos) << "seed " << seed << ": " << r.err;
    const TempFile call("lockstep_call." + std::to_string(::getpid()) + ".json", r.out);
    EXPECT_EQ(run_validator("validate_call.js", tools, call.path.string()), 0) << "seed " << seed << ": ajv rejects " << r.out;
    const auto name_at = r.out.find("\"name\":\"");
    if (name_at != std::string::npos) names.insert(r.out.substr(name_at + 8, r.out.find('"', name_at + 8) - name_at - 8));
  }
  EXPECT_GT(names.size(), 1u) << "every seed called the same tool";
}

// The issue's case: a hand-written OpenAI tools array of three functions (nested object,
// enum, array, numbers, strings without maxLength), default flags, 20 seeds — every call
// complete and valid for ajv against the chosen function's parameters.
TEST(Cli, ToolCallsOfThreeFunctionsWithDefaultFlagsAreCompleteAndValid) {
  const std::string tools = (std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "examples/tools/travel.json").string();
  int forced = 0, total = 0;
  for (int seed = 1; seed <= 20; ++seed) {
    const CliResult r = run_cli({"generate", "--tools", tools, "--seed", std::to_string(seed), "--json"});
    ASSERT_EQ(r.exit_code, 0) << "seed " << seed << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("complete"), true);
    forced += j.at("forced_tokens").get<int>();
    total += j.at("tokens").get<int>();
    const TempFile call("lockstep_call3." + std::to_string(::getpid()) + ".json", j.at("text").get<std::string>());
    EXPECT_EQ(run_validator("validate_call.js", tools, call.path.string()), 0)
        << "seed " << seed << ": ajv rejects " << j.at("text");
  }
  std::printf("[ tool calls ] 20 complete; jump-forward: %d of %d tokens forced\n", forced, total);
  EXPECT_GT(forced, 0);
}

// Length-aware closing on real schemas: the first 30 Github_easy schemas of JSONSchemaBench,
// every budget from each one's minimum to the minimum + 4: all outputs complete, and ajv
// finds each valid against its schema.
TEST(Cli, BenchClosingOutputsOnRealSchemasAreCompleteAndValid) {
  const std::string jsonl = (std::filesystem::temp_directory_path() / ("lockstep_closing." + std::to_string(::getpid()) + ".jsonl")).string();
  const CliResult r = run_cli({"bench", "closing", test_data::shared("schemas/jsonschemabench/Github_easy").string(),
                               "--limit", "30", "--extra", "4", "--workers", "1", "--jsonl", jsonl});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("incomplete"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", 0 incomplete"), std::string::npos) << r.out;
  const std::string cmd = "node " + quote((std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "tests/node/validate_jsonl.js").string()) +
                          " " + quote(jsonl) + " 2>&1";
  std::string report;
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) report.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << report;
  const auto counts = nlohmann::json::parse(report.substr(0, report.find('\n')));
  EXPECT_EQ(counts.at("invalid"), 0) << report;
  EXPECT_EQ(counts.at("not_json"), 0) << report;
  EXPECT_GT(counts.at("valid").get<int>(), 100) << report;
  std::filesystem::remove(jsonl);
}

// Generation writes numbers as a serializer does (check keeps every JSON form).
TEST(Cli, GeneratedNumbersAreWrittenAsASerializerWritesThem) {
  const TempFile schema("lockstep_number." + std::to_string(::getpid()) + ".json", R"({"type":"number"})");
  const RE2 canonical(R"((-?(0|[1-9][0-9]*)(\.[0-9]*[1-9]|\.0)?|-?[1-9](\.[0-9]*[1-9])?[eE][+-]?(0?[1-9]|[1-9][0-9]|[12][0-9][0-9]|3[01][0-9]|32[0-4])))");
  for (int seed = 1; seed <= 12; ++seed) {
    const CliResult r = run_cli({"generate", "--schema", schema.path.string(), "--whitespace", "compact",
                                 "--temperature", "1.5", "--seed", std::to_string(seed)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(RE2::FullMatch(r.out, canonical)) << r.out;
    EXPECT_NE(r.out, "-0");
    size_t digits = 0;  // significant digits: from the first non-zero one to the mantissa's end
    bool started = false;
    for (char c : r.out.substr(0, r.out.find_first_of("eE"))) {
      started = started || (c >= '1' && c <= '9');
      digits += started && c >= '0' && c <= '9';
    }
    EXPECT_LE(digits, 17u) << r.out;
  }
  EXPECT_EQ(run_cli({"check", "--schema", schema.path.string(), "--input", "-0.500e+01"}).exit_code, 0);
}

TEST(Cli, GeneratedDocumentsOfTheExampleSchemaValidateWithAjv) {
  const std::filesystem::path src(LOCKSTEP_SOURCE_DIR);
  const std::string schema = (src / "examples/schemas/event.json").string();
  for (int seed = 1; seed <= 10; ++seed) {
    const CliResult r = run_cli({"generate", "--schema", schema, "--whitespace", "compact", "--repeat-penalty", "1.3",
                                 "--seed", std::to_string(seed)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("stop: end of generation"), std::string::npos) << "seed " << seed << ": " << r.err;
    const TempFile doc("lockstep_doc." + std::to_string(::getpid()) + ".json", r.out);
    EXPECT_EQ(run_validator("validate_json.js", schema, doc.path.string()), 0) << "seed " << seed << ": ajv rejects " << r.out;
  }
  const TempFile bad("lockstep_bad_doc." + std::to_string(::getpid()) + ".json", R"({"title":"x","date":"2026-02-30"})");
  EXPECT_EQ(run_validator("validate_json.js", schema, bad.path.string()), 1) << "the validator accepts February 30";
}

TEST(Cli, AjvRejectsAnInvalidCall) {  // the validator above can fail
  const std::string tools = test_data::shared("toolcalls/mcp_tools_list_snapshots/cloudflare-radar.json").string();
  for (const std::string bad : {R"({"name":"scan_url","arguments":{"url":5}})", R"({"name":"nope","arguments":{}})",
                                R"({"name":"scan_url","arguments":{"url":"a:"}})"}) {
    const TempFile call("lockstep_bad_call." + std::to_string(::getpid()) + ".json", bad);
    EXPECT_EQ(run_validator("validate_call.js", tools, call.path.string()), 1) << bad;
  }
}

TEST(Cli, BenchGenerationComparesConstrainedAndFreeRunsAndMeasuresTheGrammarOnSyntheticLogits) {
  const std::string tools = (std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "examples/tools/travel.json").string();
  CliResult r = run_cli({"bench", "generation", "--tools", tools, "--whitespace", "compact", "--runs", "2",
                         "--max-tokens", "64", "--temperature", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 runs each, alternating"), std::string::npos) << r.out;
  EXPECT_TRUE(RE2::PartialMatch(r.out, R"(unconstrained +[1-9][0-9]* tokens/s)")) << r.out;
  EXPECT_TRUE(RE2::PartialMatch(r.out, R"(constrained +[1-9][0-9]* tokens/s \(median; [0-9]+ tokens per run, [0-9]+ of them forced\))")) << r.out;
  EXPECT_TRUE(RE2::PartialMatch(r.out, R"(ratio +[0-9]+\.[0-9]+ )")) << r.out;
  r = run_cli({"bench", "generation", "--tools", tools, "--synthetic", "--steps", "200", "--tokenizer",
               test_data::shared("models/stories260K/tok512.bin")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(512 tokens), 200 steps"), std::string::npos) << r.out;
  EXPECT_TRUE(RE2::PartialMatch(r.out, R"(grammar overhead +-?[0-9]+\.[0-9] µs per token)")) << r.out;
  // A grammar is required; synthetic mode needs a vocabulary.
  EXPECT_EQ(run_cli({"bench", "generation", "--runs", "1"}).exit_code, 2);
  EXPECT_EQ(run_cli({"bench", "generation", "--tools", tools, "--synthetic"}).exit_code, 2);
}

TEST(Cli, MaskBenchRunsADirectoryAndWritesOneJsonLinePerFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("lockstep_maskbench." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // Floats exercise Python's repr (1e+16, 1e-05, 100.0); strings the ", " / ": " separators.
  std::ofstream(dir / "a-pass.json") << R"({"schema":{"type":"object","properties":{"x":{"type":"number"}},
      "required":["x"]},"tests":[{"valid":true,"data":{"x":1e16}},{"valid":true,"data":{"x":0.00001}},
      {"valid":true,"data":{"x":100.0}},{"valid":false,"data":{"x":[1,2]}},{"valid":false,"data":{"x":"1.5"}},
      {"valid":false,"data":{}}]})";
  std::ofstream(dir / "b-compile-error.json") << R"({"schema":{"type":"string","minLength":3,"maxLength":1},"tests":[]})";
  std::ofstream(dir / "c-validation-error.json") << R"({"schema":{"type":"integer"},"tests":[{"valid":true,"data":1.5}]})";
  const std::string jsonl = (dir / "out.jsonl").string();
  const CliResult r = run_cli({"bench", "maskbench", dir.string(), "--jsonl", jsonl, "--timeout", "60"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Both modes by default: shared caches first, then a fresh process per schema; each
  // reports the same outcomes.
  const size_t fresh_at = r.out.find("fresh: a new process per schema");
  ASSERT_NE(fresh_at, std::string::npos) << r.out;
  ASSERT_EQ(r.out.find("shared: one process per worker"), 0u) << r.out;
  for (const std::string& part : {r.out.substr(0, fresh_at), r.out.substr(fresh_at)}) {
    EXPECT_NE(part.find("mask time (µs)"), std::string::npos) << r.out;
    EXPECT_NE(part.find("schemas 3"), std::string::npos) << r.out;
    EXPECT_NE(part.find("passing 1"), std::string::npos) << r.out;
    EXPECT_NE(part.find("compile error 1"), std::string::npos) << r.out;
    EXPECT_NE(part.find("validation error 1"), std::string::npos) << r.out;
  }
  std::map<std::pair<std::string, std::string>, std::string> status;
  std::istringstream lines_in(test_data::read_file(jsonl));
  for (std::string line; std::getline(lines_in, line);) {
    const auto j = nlohmann::json::parse(line);
    status[{j.at("mode"), j.at("file")}] = j.at("status");
    EXPECT_TRUE(j.contains("ttfm_us") && j.contains("tokens") && j.contains("mask_us_max")) << line;
  }
  EXPECT_EQ(status.size(), 6u);
  for (const char* mode : {"shared", "fresh"}) {
    EXPECT_EQ((status[{mode, "a-pass.json"}]), "pass") << mode;
    EXPECT_EQ((status[{mode, "b-compile-error.json"}]), "compile_error") << mode;
    EXPECT_EQ((status[{mode, "c-validation-error.json"}]), "validation_error") << mode;
  }
  const CliResult one = run_cli({"bench", "maskbench", dir.string(), "--mode", "fresh"});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.find("shared:"), std::string::npos) << one.out;
  EXPECT_EQ(run_cli({"bench", "maskbench", dir.string(), "--mode", "cold"}).exit_code, 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
