// runtime/cli/grammar_source.cpp — see grammar_source.h.
#include "runtime/cli/grammar_source.h"

#include <fmt/format.h>

#include "runtime/mapped_file.h"

namespace lockstep::cli {

void add_grammar_source_options(CLI::App& cmd, GrammarSourceArgs& args) {
  cmd.add_option("--grammar", args.grammar_file, "GBNF grammar file the output must match");
}

std::shared_ptr<const CompiledGrammar> compile_grammar_source(const GrammarSourceArgs& args) {
  if (args.grammar_file.empty()) return nullptr;
  const std::string text = read_file(args.grammar_file);
  try {
    return CompiledGrammar::compile(parse_gbnf(text));
  } catch (const GrammarError& e) {
    throw std::runtime_error(fmt::format("{}:{}", args.grammar_file, e.what()));
  }
}

}  // namespace lockstep::cli
