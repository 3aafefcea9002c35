// runtime/cli/grammar_source.h — the grammar options shared by the CLI commands.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "automata/grammar_automaton.h"
#include "schemas/json_schema.h"

namespace lockstep::cli {

/// What the grammar is for. Generation adds bounds that keep outputs sane (whitespace runs,
/// serializer-style numbers: docs/generation.md); checking and benchmarking keep the exact
/// language.
enum class GrammarPurpose { kGenerate, kCheck, kBench };

struct GrammarSourceArgs {
  GrammarPurpose purpose = GrammarPurpose::kCheck;
  std::string grammar_file;  ///< --grammar FILE.gbnf
  std::string regex;         ///< --regex PATTERN (the whole output must match)
  bool regex_given = false;
  std::string schema_file;   ///< --schema FILE.json (a JSON Schema)
  std::string tools_file;    ///< --tools FILE.json (OpenAI tools array or MCP tools/list result)
  bool parallel_tool_calls = false;
  // JSON Schema options (--schema and --tools).
  std::string whitespace = "flexible";
  std::string property_order = "schema";
  bool forbid_additional_properties = false;
  bool lenient = false;
  bool formats_as_annotations = false;
  /// Generation: the longest run of whitespace (JSON flexible whitespace, and GBNF rules that
  /// are whitespace only and unbounded); -1 keeps the grammar's own.
  int32_t max_whitespace = 8;
  /// Generation: numbers as a JSON serializer writes them (JsonSchemaOptions::canonical_numbers).
  bool exact_numbers = false;
};

/// Registers the grammar options on `cmd` for `purpose` (--max-whitespace only when
/// generating; JSON property order defaults to any order when checking, as JSON objects are
/// unordered, and to the schema's otherwise).
void add_grammar_source_options(CLI::App& cmd, GrammarSourceArgs& args, GrammarPurpose purpose);
/// `--limit NAME=N` (repeatable), applied to the process-wide EngineLimits as it is parsed;
/// `--limit list` prints the limits and exits 0. Part of add_grammar_source_options.
void add_limit_option(CLI::App& cmd);

/// The JSON Schema options the grammar options stand for (whitespace, property order,
/// formats, and generation's bounds when args.purpose is kGenerate).
JsonSchemaOptions schema_options(const GrammarSourceArgs& args);

/// The compiled grammar the options name, or null when none was given. Errors carry the
/// source's name: "FILE:line:column: message", "--regex:1:column: message",
/// "FILE: /json/pointer: message". Throws when more than one source is given. Schema
/// warnings (unknown formats, unenforced keywords in lenient mode) go to stderr.
std::shared_ptr<const GrammarAutomaton> compile_grammar_source(const GrammarSourceArgs& args);

}  // namespace lockstep::cli
