// runtime/cli/check.cpp — `lockstep check`: does a text match a grammar or regex?
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "automata/earley.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/grammar_source.h"
#include "runtime/cli/rejection.h"
#include "runtime/mapped_file.h"

namespace lockstep::cli {

namespace {

struct CheckArgs {
  GrammarSourceArgs grammar;
  std::string input, input_file;
  bool input_given = false;
};

// Exit codes: 0 accepted; 1 rejected, with where and why on stdout; 2 an error (main).
void run(const CheckArgs& a) {
  if (a.input_given && !a.input_file.empty()) throw std::runtime_error("give one of --input TEXT and --input-file FILE, not both");
  const auto g = compile_grammar_source(a.grammar);
  if (!g) throw std::runtime_error("give the grammar to check against: --grammar FILE, --regex PATTERN, --schema FILE or --tools FILE");
  if (!a.input_given && a.input_file.empty()) throw std::runtime_error("give the text to check: --input TEXT or --input-file FILE");
  const std::string text = a.input_given ? a.input : read_file(a.input_file);
  EarleyParser p(*g);
  size_t i = 0;
  while (i < text.size() && p.advance(static_cast<uint8_t>(text[i]))) ++i;
  if (i == text.size() && p.accepting()) {
    std::printf("accepted\n");
    return;
  }
  const bool json = !a.grammar.schema_file.empty() || !a.grammar.tools_file.empty();
  std::printf("%s\n", rejection_message(p, text, i, json).c_str());
  throw CommandExit{kExitRejected, ""};
}

}  // namespace

void add_check(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "Check a text against a grammar (exit 0 when it matches)");
  add_grammar_source_options(*cmd, args->grammar, GrammarPurpose::kCheck);
  cmd->add_option("--input,-i", args->input, "The text")->each([args](const std::string&) { args->input_given = true; });
  cmd->add_option("--input-file", args->input_file, "A file holding the text");
  cmd->footer(
      "JSON (--schema, --tools): members in any order unless --property-order schema; whitespace of\n"
      "any length wherever JSON allows it unless --whitespace compact or pretty.\n"
      "\n"
      "Exit codes:\n"
      "  0  the text matches (\"accepted\" on stdout)\n"
      "  1  it does not: stdout says where it stops matching (byte offset; line and column when the\n"
      "     text has several lines; the JSON pointer with --schema and --tools) and what could come there\n"
      "  2  an error (bad options, an unreadable file, a malformed grammar, regex or schema): one\n"
      "     \"lockstep: error:\" line on stderr");
  cmd->callback([args] { run(*args); });
}

}  // namespace lockstep::cli
