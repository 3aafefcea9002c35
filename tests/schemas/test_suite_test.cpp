// The official JSON-Schema-Test-Suite (draft2020-12 and draft7, with the optional format
// tests): for every test group whose schema compiles in strict mode, every `valid: true`
// instance must be accepted and every `valid: false` one rejected by the compiled grammar,
// fed byte by byte (compact serialization) to an independent Earley parser.
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "automata/earley.h"
#include "schemas/json_schema.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

struct KeywordTally {
  int groups = 0, compiled = 0, tests = 0, agreeing = 0, known = 0;
  std::vector<std::string> disagreements;
};

// Disagreements lockstep documents (docs/schemas.md, "Known limitations"), by test
// description. Each must still disagree: a fix removes it from this list.
const std::map<std::string, std::string>& known_limitations() {
  static const std::map<std::string, std::string> m = {
      {"an invalid date-time with leap second on a wrong minute, UTC", "leap seconds accepted at any minute"},
      {"an invalid date-time with leap second on a wrong hour, UTC", "leap seconds accepted at any minute"},
      {"invalid leap second, Zulu (wrong hour)", "leap seconds accepted at any minute"},
      {"invalid leap second, Zulu (wrong minute)", "leap seconds accepted at any minute"},
      {"invalid leap second, zero time-offset (wrong hour)", "leap seconds accepted at any minute"},
      {"invalid leap second, zero time-offset (wrong minute)", "leap seconds accepted at any minute"},
      {"invalid leap second, positive time-offset (wrong hour)", "leap seconds accepted at any minute"},
      {"invalid leap second, positive time-offset (wrong minute)", "leap seconds accepted at any minute"},
      {"invalid leap second, negative time-offset (wrong hour)", "leap seconds accepted at any minute"},
      {"invalid leap second, negative time-offset (wrong minute)", "leap seconds accepted at any minute"},
      {"an invalid time string with invalid leap second (wrong hour)", "leap seconds accepted at any minute"},
      {"an invalid time string with invalid leap second (wrong minute)", "leap seconds accepted at any minute"},
  };
  return m;
}

// Hostname A-labels ("xn--") are checked as LDH labels, not decoded and checked against
// IDNA 2008; the 253-octet overall limit is not enforced.
bool known_hostname_limitation(const std::string& file, const std::string& group, const std::string& test,
                               bool valid) {
  return file == "hostname.json" && !valid && (group.find("A-label") != std::string::npos ||
                                     test.find("maximum overall length") != std::string::npos);
}

bool accepts(const GrammarAutomaton& g, const std::string& text) {
  EarleyParser p(g);
  return p.advance(text) && p.accepting();
}

// Runs one suite file; `assert_formats` follows the suite's split: format is an annotation
// in the main tests and an assertion in optional/format.
void run_file(const std::filesystem::path& path, const std::string& draft, bool assert_formats,
              KeywordTally& tally) {
  const auto groups = nlohmann::ordered_json::parse(test_data::read_file(path));
  for (const auto& group : groups) {
    ++tally.groups;
    JsonSchemaOptions options;
    options.default_draft = draft;
    options.assert_formats = assert_formats;
    options.property_order = JsonSchemaOptions::PropertyOrder::kAny;
    std::shared_ptr<const GrammarAutomaton> grammar;
    try {
      const CompiledSchema compiled = compile_json_schema(group["schema"], options);
      // A format lockstep does not know constrains nothing (a warning): out of the claim.
      bool unknown_format = false;
      for (const auto& w : compiled.warnings) unknown_format |= w.find("is not known") != std::string::npos;
      if (unknown_format) continue;
      grammar = GrammarAutomaton::compile(compiled.grammar);
    } catch (const std::exception&) {
      continue;  // not compiled in strict mode: the group is out of the claim
    }
    ++tally.compiled;
    for (const auto& test : group["tests"]) {
      ++tally.tests;
      const std::string text = test["data"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      const bool valid = test["valid"].get<bool>();
      const std::string description = test["description"].get<std::string>();
      const bool known = known_limitations().count(description) ||
                         known_hostname_limitation(path.filename().string(), group["description"].get<std::string>(),
                                                   description, valid);
      const bool agrees = accepts(*grammar, text) == valid;
      if (known) {
        ++tally.known;
        EXPECT_FALSE(agrees) << path.filename().string() << ": \"" << description
                             << "\" is listed as a known limitation but now agrees: take it off the list";
      } else if (agrees) {
        ++tally.agreeing;
      } else {
        tally.disagreements.push_back(fmt::format("{}: \"{}\" / \"{}\": {} should be {}", path.filename().string(),
                                                  group["description"].get<std::string>(),
                                                  test["description"].get<std::string>(), text,
                                                  valid ? "accepted" : "rejected"));
      }
    }
  }
}

std::map<std::string, KeywordTally> run_draft(const std::string& dir, const std::string& draft) {
  std::map<std::string, KeywordTally> tallies;
  const auto root = test_data::shared("schemas/json-schema-test-suite/tests/" + dir);
  for (const auto& f : test_data::files_with_suffix(root, ".json")) {
    run_file(f, draft, false, tallies[f.stem().string()]);
  }
  for (const auto& f : test_data::files_with_suffix(root / "optional/format", ".json")) {
    run_file(f, draft, true, tallies["format:" + f.stem().string()]);
  }
  // "dependencies" in drafts that replaced it: kept, as validators keep it for compatibility.
  if (const auto compat = root / "optional/dependencies-compatibility.json"; std::filesystem::exists(compat)) {
    run_file(compat, draft, false, tallies["optional:dependencies-compatibility"]);
  }
  return tallies;
}

void report_and_check(const std::string& dir, const std::map<std::string, KeywordTally>& tallies) {
  int groups = 0, compiled = 0, tests = 0, agreeing = 0, known = 0;
  std::string table;
  for (const auto& [keyword, t] : tallies) {
    groups += t.groups, compiled += t.compiled, tests += t.tests, agreeing += t.agreeing, known += t.known;
    table += fmt::format("  {:<28} groups {:>3}  compiled {:>3}  tests agreeing {:>3}/{:<3}{}\n", keyword, t.groups,
                         t.compiled, t.agreeing, t.tests,
                         t.known ? fmt::format("  ({} known limitations)", t.known) : std::string());
    for (const auto& d : t.disagreements) ADD_FAILURE() << d;
  }
  std::printf("JSON-Schema-Test-Suite %s: %d groups, %d compiled, %d/%d tests agreeing, %d known limitations\n%s",
              dir.c_str(), groups, compiled, agreeing, tests, known, table.c_str());
  EXPECT_GT(compiled, groups * 7 / 10);
}

TEST(JsonSchemaTestSuite, Draft2020_12EveryCompiledGroupAgrees) {
  report_and_check("draft2020-12", run_draft("draft2020-12", "2020-12"));
}

TEST(JsonSchemaTestSuite, Draft7EveryCompiledGroupAgrees) {
  report_and_check("draft7", run_draft("draft7", "7"));
}

}  // namespace
}  // namespace lockstep
