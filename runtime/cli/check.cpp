// runtime/cli/check.cpp — `lockstep check`: does a text match a grammar or regex?
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "automata/earley.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/grammar_source.h"
#include "runtime/mapped_file.h"

namespace lockstep::cli {

namespace {

struct CheckArgs {
  GrammarSourceArgs grammar;
  std::string input, input_file;
  bool input_given = false;
};

// Exit codes: 0 accepted, 1 rejected (or an error, reported by main).
class Rejected : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void run(const CheckArgs& a) {
  const auto g = compile_grammar_source(a.grammar);
  if (!g) throw std::runtime_error("give the grammar to check against: --grammar FILE, --regex PATTERN, --schema FILE or --tools FILE");
  if (a.input_given == !a.input_file.empty()) throw std::runtime_error("give one of --input TEXT and --input-file FILE");
  const std::string text = a.input_given ? a.input : read_file(a.input_file);
  EarleyParser p(*g);
  size_t i = 0;
  while (i < text.size() && p.advance(static_cast<uint8_t>(text[i]))) ++i;
  if (i < text.size()) {
    throw Rejected(fmt::format("rejected: the input stops matching at byte offset {} (after {} of {} bytes)", i, i,
                               text.size()));
  }
  if (!p.accepting()) throw Rejected(fmt::format("rejected: the input ({} bytes) is incomplete: a prefix of a match", text.size()));
  std::printf("accepted\n");
}

}  // namespace

void add_check(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "Check a text against a grammar (exit 0 when it matches)");
  add_grammar_source_options(*cmd, args->grammar, GrammarPurpose::kCheck);
  cmd->add_option("--input,-i", args->input, "The text")->each([args](const std::string&) { args->input_given = true; });
  cmd->add_option("--input-file", args->input_file, "A file holding the text");
  cmd->callback([args] {
    try {
      run(*args);
    } catch (const Rejected& r) {
      std::printf("%s\n", r.what());
      std::fflush(stdout);
      std::exit(1);
    }
  });
}

}  // namespace lockstep::cli
