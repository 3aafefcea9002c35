// runtime/cli/grammar_source.cpp — see grammar_source.h.
#include "runtime/cli/grammar_source.h"

#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "automata/earley.h"
#include "grammar/limits.h"
#include "runtime/cli/commands.h"
#include "runtime/mapped_file.h"
#include "schemas/json_document.h"
#include "schemas/json_schema.h"
#include "schemas/tool_calls.h"

namespace lockstep::cli {

void add_grammar_source_options(CLI::App& cmd, GrammarSourceArgs& args, GrammarPurpose purpose) {
  args.purpose = purpose;
  if (purpose == GrammarPurpose::kCheck) args.property_order = "any";
  cmd.add_option("--grammar", args.grammar_file, "GBNF grammar file the output must match");
  cmd.add_option("--regex", args.regex, "Regular expression the whole output must match")
      ->each([&args](const std::string&) { args.regex_given = true; });
  cmd.add_option("--schema", args.schema_file, "JSON Schema file the output must be valid against");
  cmd.add_option("--tools", args.tools_file,
                 "Tool definitions (OpenAI tools array, MCP tools/list result): the output is one call "
                 "{\"name\": ..., \"arguments\": ...}");
  cmd.add_flag("--parallel-tool-calls", args.parallel_tool_calls, "With --tools: a JSON array of one or more calls");
  const bool checking = purpose == GrammarPurpose::kCheck;
  cmd.add_option("--whitespace", args.whitespace,
                 checking ? "JSON whitespace: flexible (any amount wherever JSON allows it), compact (none) or pretty"
                          : "JSON whitespace: compact, flexible or pretty")
      ->check(CLI::IsMember({"compact", "flexible", "pretty"}))
      ->capture_default_str();
  cmd.add_option("--property-order", args.property_order,
                 checking ? "JSON object members: any (any order, as JSON objects are unordered) or schema (opt in: "
                            "in the order of properties, as generation writes them)"
                          : "JSON object members: schema (as in properties) or any")
      ->check(CLI::IsMember({"schema", "any"}))
      ->capture_default_str();
  cmd.add_flag("--no-additional-properties", args.forbid_additional_properties,
               "Treat every object schema as if it had \"additionalProperties\": false");
  cmd.add_flag("--lenient", args.lenient, "Compile schemas with keywords lockstep cannot enforce (listed on stderr)");
  cmd.add_flag("--formats-as-annotations", args.formats_as_annotations, "Do not enforce \"format\"");
  add_limit_option(cmd);
  if (purpose == GrammarPurpose::kGenerate) {
    cmd.add_option("--max-whitespace", args.max_whitespace,
                   "Longest whitespace run generation writes (JSON flexible whitespace, whitespace-only GBNF rules); "
                   "-1 keeps the grammar's own")
        ->check(CLI::Range(-1, 1 << 20))
        ->capture_default_str();
    cmd.add_flag("--exact-numbers", args.exact_numbers,
                 "JSON numbers in any form the schema allows (default: as a serializer writes them: no -0, no "
                 "trailing zeros, at most 17 significant digits unless the schema needs more)");
  }
}

void add_limit_option(CLI::App& cmd) {
  cmd.add_option_function<std::vector<std::string>>(
         "--limit",
         [](const std::vector<std::string>& assignments) {
           EngineLimits limits = engine_limits();
           for (const auto& a : assignments) {
             if (a == "list") {
               std::string table = "engine limits (--limit name=value; k, M, G: times 1024, 1024², 1024³):\n";
               for (const auto& info : engine_limit_table()) {
                 table += fmt::format("  {:<28} {:>12} {:<7} {}\n", info.name, limits.*(info.field), info.unit,
                                      info.description);
               }
               std::fputs(table.c_str(), stdout);
               throw CommandExit{0, ""};
             }
             set_engine_limit(limits, a);
           }
           set_engine_limits(limits);
         },
         "Set an engine limit, NAME=N (repeatable; `--limit list` shows every limit and its value)")
      ->type_name("NAME=N");
}

namespace {

// Schema and tool files nest at most EngineLimits::nesting_depth levels of JSON, checked as
// they are read (the schema compiler then counts sub-schema levels, schemas/schema_nesting.h).
nlohmann::ordered_json read_json(const std::string& path) { return parse_json_document(read_file(path), path); }

}  // namespace

JsonSchemaOptions schema_options(const GrammarSourceArgs& a) {
  JsonSchemaOptions o;
  o.whitespace = a.whitespace == "compact"  ? JsonSchemaOptions::Whitespace::kCompact
                 : a.whitespace == "pretty" ? JsonSchemaOptions::Whitespace::kPretty
                                            : JsonSchemaOptions::Whitespace::kFlexible;
  o.property_order = a.property_order == "any" ? JsonSchemaOptions::PropertyOrder::kAny
                                               : JsonSchemaOptions::PropertyOrder::kSchema;
  o.forbid_additional_properties = a.forbid_additional_properties;
  o.lenient = a.lenient;
  o.assert_formats = !a.formats_as_annotations;
  if (a.purpose == GrammarPurpose::kGenerate) {
    if (a.max_whitespace >= 0) o.max_whitespace = static_cast<uint32_t>(a.max_whitespace);
    o.canonical_numbers = !a.exact_numbers;
  }
  return o;
}

namespace {

// "file:line:column: warning: ..." for each of the grammar's warnings (a long list is cut).
void print_warnings(const std::string& file, const Grammar& g) {
  constexpr size_t kShown = 20;
  for (size_t i = 0; i < g.warnings.size() && i < kShown; ++i) {
    const GrammarWarning& w = g.warnings[i];
    ErrorLocation where = ErrorLocation::at(w.where);
    where.file = file;
    std::fprintf(stderr, "%s: warning: %s\n", where.str().c_str(), w.message.c_str());
  }
  if (g.warnings.size() > kShown) {
    std::fprintf(stderr, "%s: warning: and %zu more rules that can never finish\n", file.c_str(),
                 g.warnings.size() - kShown);
  }
}

std::shared_ptr<const GrammarAutomaton> from_schema(const std::string& path, CompiledSchema&& cs) {
  for (const auto& w : cs.warnings) std::fprintf(stderr, "%s: warning: %s\n", path.c_str(), w.c_str());
  for (const auto& u : cs.unenforced) std::fprintf(stderr, "%s: not enforced: %s\n", path.c_str(), u.c_str());
  return GrammarAutomaton::compile(std::move(cs.grammar));
}

}  // namespace

std::shared_ptr<const GrammarAutomaton> compile_grammar_source(const GrammarSourceArgs& args) {
  const int given =
      !args.grammar_file.empty() + args.regex_given + !args.schema_file.empty() + !args.tools_file.empty();
  if (given > 1) throw std::runtime_error("give one of --grammar, --regex, --schema and --tools, not several");
  if (args.parallel_tool_calls && args.tools_file.empty()) {
    throw std::runtime_error("--parallel-tool-calls needs --tools");
  }
  try {
    if (!args.grammar_file.empty()) {
      const std::string text = read_file(args.grammar_file);
      try {
        Grammar g = parse_gbnf(text);
        print_warnings(args.grammar_file, g);
        if (args.purpose == GrammarPurpose::kGenerate && args.max_whitespace >= 0) {
          const auto bounded = bound_whitespace_rules(g, static_cast<uint32_t>(args.max_whitespace));
          for (const auto& name : bounded) {
            std::fprintf(stderr, "%s: note: generation limits whitespace rule '%s' to runs of %d (--max-whitespace -1 keeps the grammar's)\n",
                         args.grammar_file.c_str(), name.c_str(), args.max_whitespace);
          }
        }
        return GrammarAutomaton::compile(std::move(g));
      } catch (Error& e) {
        e.set_file(args.grammar_file);
        throw;
      }
    }
    if (args.regex_given) {
      try {
        return GrammarAutomaton::compile(parse_regex(args.regex));
      } catch (const Error& e) {
        ErrorLocation where = e.location();
        where.file = "--regex";
        throw Error(where, fmt::format("{} (pattern: {})", e.message(), args.regex));
      }
    }
    if (!args.schema_file.empty()) {
      const auto doc = read_json(args.schema_file);
      try {
        return from_schema(args.schema_file, compile_json_schema(doc, schema_options(args)));
      } catch (Error& e) {
        e.set_file(args.schema_file);
        throw;
      }
    }
    if (!args.tools_file.empty()) {
      const auto doc = read_json(args.tools_file);
      try {
        return from_schema(args.tools_file, compile_tool_calls(parse_tool_definitions(doc), schema_options(args),
                                                               args.parallel_tool_calls));
      } catch (Error& e) {
        e.set_file(args.tools_file);
        throw;
      }
    }
  } catch (const ParserLimitError& e) {
    // The empty output's parse, not a place in the grammar text.
    throw Error(e.message());
  }
  return nullptr;
}

}  // namespace lockstep::cli
