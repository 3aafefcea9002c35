// `lockstep check`: JSON judged as JSON (any member order, any whitespace), rejections that
// say where (byte, line:column, JSON pointer) and what was expected, errors that exit 2.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/runtime/cli_runner.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

std::string example(const std::string& relative) {
  return (std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "examples" / relative).string();
}

const std::string kEvent = example("schemas/event.json");
const std::string kTravel = example("tools/travel.json");

std::string tmp_name(const std::string& stem) { return stem + "." + std::to_string(::getpid()) + ".json"; }

// ajv's verdict on a document (validate_json.js) or a call (validate_call.js): 0 valid.
int ajv(const std::string& script, const std::string& schema_or_tools, const std::string& document) {
  const TempFile doc(tmp_name("lockstep_check_doc"), document);
  return run_validator(script, schema_or_tools, doc.path.string());
}

void expect_accepted(const CliResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "accepted\n");
  EXPECT_EQ(r.err, "");
}

void expect_rejected(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, message + "\n");
  EXPECT_EQ(r.err, "");
}

// The pointer a rejection names, resolved in nlohmann's parse of the (complete) document.
void expect_pointer_resolves(const std::string& document, const std::string& pointer) {
  const auto doc = nlohmann::json::parse(document);
  EXPECT_TRUE(doc.contains(nlohmann::json::json_pointer(pointer))) << pointer << " in " << document;
}

TEST(CheckCli, SchemaMembersInAnyOrderUnlessAskedForTheSchemasOrder) {
  // properties lists title, date, attendees, priority.
  const std::string doc = R"({"priority": "high", "date": "2026-03-14", "attendees": ["Ann"], "title": "Launch"})";
  expect_accepted(run_cli({"check", "--schema", kEvent, "--input", doc}));
  EXPECT_EQ(ajv("validate_json.js", kEvent, doc), 0);
  expect_rejected(run_cli({"check", "--schema", kEvent, "--property-order", "schema", "--input", doc}),
                  R"(rejected at byte 2, in "" (the root), in the key "": expected 'title"')");
  const std::string ordered = R"({"title": "Launch", "date": "2026-03-14", "attendees": ["Ann"], "priority": "high"})";
  expect_accepted(run_cli({"check", "--schema", kEvent, "--property-order", "schema", "--input", ordered}));
}

TEST(CheckCli, JsonWhitespaceOfAnyLengthWhereverJsonAllowsIt) {
  const std::string ws = std::string(40, ' ') + "\n\n\t\r\n" + std::string(25, ' ');
  const std::string doc = ws + "{" + ws + "\"date\"" + ws + ":" + ws + "\"2026-03-14\"" + ws + "," + ws + "\"attendees\"" +
                          ws + ":" + ws + "[" + ws + "\"Ann\"" + ws + "," + ws + "\"Bo\"" + ws + "]" + ws + "," + ws +
                          "\"title\":\"Launch\"" + ws + "}" + ws;
  const TempFile file(tmp_name("lockstep_check_ws"), doc);
  expect_accepted(run_cli({"check", "--schema", kEvent, "--input-file", file.path.string()}));
  EXPECT_EQ(ajv("validate_json.js", kEvent, doc), 0);
  const std::string call = "{" + ws + "\"name\"" + ws + ":" + ws + "\"get_forecast\"" + ws + "," + ws + "\"arguments\"" +
                           ws + ":" + ws + "{" + ws + "\"days\"" + ws + ":" + ws + "2.5" + ws + "," + ws +
                           "\"location\":{" + ws + "\"city\":\"Oslo\"}" + ws + "}" + ws + "}";
  expect_accepted(run_cli({"check", "--tools", kTravel, "--input", call}));
  EXPECT_EQ(ajv("validate_call.js", kTravel, call), 0);
}

TEST(CheckCli, ToolCallMembersInAnyOrder) {
  const std::string call = R"({"arguments": {"days": 3, "location": {"city": "Oslo"}}, "name": "get_forecast"})";
  expect_accepted(run_cli({"check", "--tools", kTravel, "--input", call}));
  EXPECT_EQ(ajv("validate_call.js", kTravel, call), 0);
  expect_rejected(run_cli({"check", "--tools", kTravel, "--property-order", "schema", "--input", call}),
                  R"(rejected at byte 2, in "" (the root), in the key "": expected 'name"')");
  // The arguments still have to be those of the tool named after them.
  const std::string wrong = R"({"arguments": {"days": 3, "location": {"city": "Oslo"}}, "name": "send_message"})";
  expect_rejected(run_cli({"check", "--tools", kTravel, "--input", wrong}),
                  R"(rejected at byte 66, in /name: expected 'get_forecast"')");
  EXPECT_EQ(ajv("validate_call.js", kTravel, wrong), 1);
}

TEST(CheckCli, SchemaRejectionsNameTheByteThePointerAndWhatWasExpected) {
  struct Case {
    std::string doc, message;
  };
  const Case cases[] = {
      // A number where a string is expected.
      {R"({"title": 5, "date": "2026-03-14"})", R"(rejected at byte 10, in /title: expected '"')"},
      // The closing brace missing.
      {R"({"title": "a", "date": "2026-03-14")",
       R"(rejected: the input is incomplete: it ends at byte 35, in "" (the root): expected ',' or '}')"},
      // An enum value misspelled.
      {R"({"title": "a", "date": "2026-03-14", "priority": "hihg"})",
       R"(rejected at byte 52, in /priority: expected 'gh"'; allowed here: "high", "low", "normal")"},
      {R"({"title": "a", "date": "2026-03-14", "priority": 1})",
       R"(rejected at byte 49, in /priority: expected one of "high", "low", "normal")"},
      // Not JSON, at a key the schema does not have, and not JSON at all.
      {R"({"a":})",
       R"(rejected at byte 3, in "" (the root), in the key "a": expected 'ttendees"'; allowed here: "attendees", "date", "priority", "title")"},
      {"hello", R"(rejected at byte 0, in "" (the root): expected '{')"},
      {"", R"(rejected: the input is incomplete: it ends at byte 0, in "" (the root): expected '{')"},
      {R"({"title": "a", "date": "2026-03-14"} x)", R"(rejected at byte 37, in "" (the root): expected the end of the input)"},
      {R"({"title": "a", "date": "2026-03-14", "attendees": ["Ann", 7]})",
       R"(rejected at byte 58, in /attendees/1: expected '"')"},
      // Several lines: line and column too.
      {"{\n  \"title\": \"Launch\",\n  \"date\": \"2026-3-14\"\n}",
       R"(rejected at byte 39 (line 3, column 17), in /date: expected '0' or '1')"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.doc);
    expect_rejected(run_cli({"check", "--schema", kEvent, "--input", c.doc}), c.message);
    EXPECT_EQ(ajv("validate_json.js", kEvent, c.doc), 1);
  }
  expect_pointer_resolves(cases[0].doc, "/title");
  expect_pointer_resolves(cases[2].doc, "/priority");
  expect_pointer_resolves(cases[8].doc, "/attendees/1");
}

TEST(CheckCli, ToolCallRejectionsNameTheByteThePointerAndWhatWasExpected) {
  struct Case {
    std::string call, message;
  };
  const Case cases[] = {
      {R"({"name": "get_forecast", "arguments": {"location": {"city": 5}, "days": 3}})",
       R"(rejected at byte 60, in /arguments/location/city: expected '"')"},
      {R"({"name": "get_forecast", "arguments": {"location": {"city": "Oslo"}, "days": 3})",
       R"(rejected: the input is incomplete: it ends at byte 79, in "" (the root): expected '}')"},
      {R"({"name": "get_forecast", "arguments": {"location": {"city": "Oslo"}, "days": 1)",
       R"(rejected: the input is incomplete: it ends at byte 78, in /arguments/days: expected a digit, ',', '.', 'E', 'e' or '}')"},
      {R"({"name": "get_forecast", "arguments": {"location": {"city": "Oslo"}, "days": 3, "unit": "celsiuss"}})",
       R"(rejected at byte 96, in /arguments/unit: expected '"'; allowed here: "celsius", "fahrenheit")"},
      {R"({"name": "get_forecast", "arguments": {"days":}})",
       R"(rejected at byte 46, in /arguments/days: expected a digit)"},
      {R"({"name": "get_weather", "arguments": {}})",
       R"(rejected at byte 14, in /name: expected 'forecast"'; allowed here: "book_hotel", "get_forecast", "send_message")"},
      {R"({"name": "book_hotel", "arguments": {"hotel": "H", "guests": [{"name": "a"}, {"name": 2}], "nights": 1}})",
       R"(rejected at byte 86, in /arguments/guests/1/name: expected '"')"},
      {R"({"name": "book_hotel", "arguments": {"hotel": "H", "breakfast": 1)",
       R"(rejected at byte 64, in /arguments/breakfast: expected one of false, true)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.call);
    expect_rejected(run_cli({"check", "--tools", kTravel, "--input", c.call}), c.message);
    EXPECT_EQ(ajv("validate_call.js", kTravel, c.call), 1);
  }
  expect_pointer_resolves(cases[0].call, "/arguments/location/city");
  expect_pointer_resolves(cases[3].call, "/arguments/unit");
  expect_pointer_resolves(cases[6].call, "/arguments/guests/1/name");
  // A key being read: the object's pointer and the key so far.
  expect_rejected(run_cli({"check", "--tools", kTravel, "--no-additional-properties", "--input",
                           R"({"name": "get_forecast", "arguments": {"locaton": 1}})"}),
                  R"(rejected at byte 45, in /arguments, in the key "locat": expected 'ion"'; allowed here: "days", "location", "unit")");
  expect_rejected(run_cli({"check", "--tools", kTravel, "--no-additional-properties", "--input",
                           R"({"name": "get_forecast", "arguments": {)"}),
                  R"(rejected: the input is incomplete: it ends at byte 39, in /arguments: expected one of "days", "location", "unit")");
  // Parallel calls: the array index leads the pointer.
  expect_rejected(run_cli({"check", "--tools", kTravel, "--parallel-tool-calls", "--input",
                           R"([{"name": "send_message", "arguments": {"to": "a", "body": "b"}}, {"name": "send_message", "arguments": {"to": 1}}])"}),
                  R"(rejected at byte 111, in /1/arguments/to: expected '"')");
}

// Where the text stops being JSON at a structural byte, nlohmann's parser (an independent
// reader) stops at the same byte.
TEST(CheckCli, NotJsonIsARejectionAtTheByteNlohmannStopsAt) {
  const TempFile any(tmp_name("lockstep_check_any"), "{}");
  for (const std::string doc : {R"({"a":})", "[1,]", "{,}", R"({"a":1,})", "[}", R"({"a":1])", R"([[1], {"b": [2, }])"}) {
    SCOPED_TRACE(doc);
    size_t nlohmann_byte = 0;
    try {
      [[maybe_unused]] const auto parsed = nlohmann::json::parse(doc);
      FAIL() << "nlohmann accepts it";
    } catch (const nlohmann::json::parse_error& e) {
      nlohmann_byte = e.byte - 1;  // e.byte: 1-based, the byte just read
    }
    const CliResult r = run_cli({"check", "--schema", any.path.string(), "--input", doc});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out.rfind("rejected at byte " + std::to_string(nlohmann_byte) + ", in ", 0), 0u) << r.out;
    EXPECT_EQ(lines(r.out), 1u);
  }
  expect_rejected(run_cli({"check", "--schema", any.path.string(), "--input", R"({"a":})"}),
                  R"(rejected at byte 5, in /a: expected a digit, '"', '-', '[', 'f', 'n', 't' or '{')");
  expect_rejected(run_cli({"check", "--schema", any.path.string(), "--input", R"([1, 2,, 3])"}),
                  R"(rejected at byte 6, in /2: expected a digit, '"', '-', '[', 'f', 'n', 't' or '{')");
}

TEST(CheckCli, GrammarAndRegexRejectionsNameTheByteAndWhatWasExpected) {
  const std::string phone = "[0-9]{3}-[0-9]{4}";
  expect_rejected(run_cli({"check", "--regex", phone, "--input", "555-12x4"}), "rejected at byte 6: expected a digit");
  expect_rejected(run_cli({"check", "--regex", phone, "--input", "555-12"}),
                  "rejected: the input is incomplete: it ends at byte 6: expected a digit");
  expect_rejected(run_cli({"check", "--regex", "yes|no", "--input", "maybe"}), "rejected at byte 0: expected 'n' or 'y'");
  expect_rejected(run_cli({"check", "--regex", "[0-9]+", "--input", "12a"}),
                  "rejected at byte 2: expected a digit or the end of the input");
  const TempFile g(tmp_name("lockstep_check_greeting").append(".gbnf"), "root ::= \"hello\" [ \\n]+ \"world\\n\"\n");
  expect_rejected(run_cli({"check", "--grammar", g.path.string(), "--input", "hello\n  wrld\n"}),
                  "rejected at byte 9 (line 2, column 4): expected 'orld\\n'");
  expect_rejected(run_cli({"check", "--grammar", g.path.string(), "--input", "hello"}),
                  "rejected: the input is incomplete: it ends at byte 5: expected '\\n' or ' '");
  // The grammar's own JSON (a GBNF file, not --schema): no pointer, whitespace named.
  expect_rejected(run_cli({"check", "--grammar", example("grammars/json.gbnf"), "--input", R"({"a": [1, 2,, 3]})"}),
                  R"(rejected at byte 12: expected a digit, '"', '-', '[', 'f', 'n', 't', '{' or whitespace)");
}

TEST(CheckCli, ErrorsExitTwoWithOneLine) {
  expect_one_line_error(run_cli({"check", "--regex", "a", "--input-file", "/nonexistent/doc.txt"}),
                        "/nonexistent/doc.txt: cannot open");
  expect_one_line_error(run_cli({"check", "--regex", "a", "--input-file", std::filesystem::temp_directory_path().string()}),
                        "is a directory");
  expect_one_line_error(run_cli({"check", "--regex", "[z-a]", "--input", "x"}), "--regex:1:2:");
  const TempFile bad_schema(tmp_name("lockstep_check_bad_schema"), R"({"type": "object",})");
  expect_one_line_error(run_cli({"check", "--schema", bad_schema.path.string(), "--input", "{}"}),
                        bad_schema.path.string() + ":1:19: malformed JSON");
  const TempFile bad_keyword(tmp_name("lockstep_check_bad_keyword"), R"({"type": "string", "minLength": -1})");
  expect_one_line_error(run_cli({"check", "--schema", bad_keyword.path.string(), "--input", "\"\""}),
                        bad_keyword.path.string() + ": /minLength");
  const TempFile bad_gbnf(tmp_name("lockstep_check_bad").append(".gbnf"), "root ::= [a-\n");
  expect_one_line_error(run_cli({"check", "--grammar", bad_gbnf.path.string(), "--input", "a"}), bad_gbnf.path.string() + ":1:");
  expect_one_line_error(run_cli({"check", "--tools", kEvent, "--input", "{}"}), "expected tool definitions");
  expect_one_line_error(run_cli({"check", "--regex", "a", "--input", "a", "--input-file", kEvent}),
                        "give one of --input TEXT and --input-file FILE, not both");
  expect_one_line_error(run_cli({"check", "--input", "a"}), "give the grammar to check against");
  expect_one_line_error(run_cli({"check", "--regex", "a"}), "give the text to check");
  expect_one_line_error(run_cli({"check", "--regex", "a", "--schema", kEvent, "--input", "a"}), "give one of --grammar");
  expect_one_line_error(run_cli({"check", "--schema", kEvent, "--property-order", "alphabetical", "--input", "{}"}),
                        "--property-order");
}

TEST(CheckCli, HelpStatesTheExitCodesAndTheJsonDefaults) {
  const CliResult r = run_cli({"check", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* fragment : {"Exit codes:", "0  the text matches", "1  it does not", "2  an error",
                               "members in any order", "--property-order", "opt in"}) {
    EXPECT_NE(r.out.find(fragment), std::string::npos) << fragment << "\n" << r.out;
  }
}

}  // namespace
}  // namespace lockstep
