// runtime/cli/commands.h — the subcommands of the `lockstep` CLI.
#pragma once

#include <CLI/CLI.hpp>

namespace lockstep::cli {

/// Each registers its subcommand on `app`; the callback runs it. Errors are thrown and
/// reported by main() as one "lockstep: error: ..." line with exit code 1.
void add_generate(CLI::App& app);
void add_tokenize(CLI::App& app);
void add_convert(CLI::App& app);
void add_bench(CLI::App& app);
void add_check(CLI::App& app);
/// Registers `maskbench` under the `bench` command.
void add_maskbench(CLI::App& bench);


}  // namespace lockstep::cli
