// runtime/cli/grammar_source.cpp — see grammar_source.h.
#include "runtime/cli/grammar_source.h"

#include <fmt/format.h>

#include "automata/earley.h"
#include "runtime/mapped_file.h"

namespace lockstep::cli {

void add_grammar_source_options(CLI::App& cmd, GrammarSourceArgs& args) {
  cmd.add_option("--grammar", args.grammar_file, "GBNF grammar file the output must match");
  cmd.add_option("--regex", args.regex, "Regular expression the whole output must match")
      ->each([&args](const std::string&) { args.regex_given = true; });
}

std::shared_ptr<const CompiledGrammar> compile_grammar_source(const GrammarSourceArgs& args) {
  const int given = !args.grammar_file.empty() + args.regex_given;
  if (given > 1) throw std::runtime_error("give one of --grammar and --regex, not several");
  try {
    if (!args.grammar_file.empty()) {
      const std::string text = read_file(args.grammar_file);
      try {
        return CompiledGrammar::compile(parse_gbnf(text));
      } catch (const GrammarError& e) {
        throw std::runtime_error(fmt::format("{}:{}", args.grammar_file, e.what()));
      }
    }
    if (args.regex_given) {
      try {
        return CompiledGrammar::compile(parse_regex(args.regex));
      } catch (const GrammarError& e) {
        throw std::runtime_error(fmt::format("--regex:{} (pattern: {})", e.what(), args.regex));
      }
    }
  } catch (const ParserLimitError& e) {
    throw std::runtime_error(e.what());
  }
  return nullptr;
}

}  // namespace lockstep::cli
