// runtime/cli/commands.h — the subcommands of the `lockstep` CLI.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace lockstep::cli {

/// Exit codes: 0 success; 1 a rejection (`check`); 2 an error — bad flags or input files,
/// a malformed grammar, schema or model, reported by main() as one "lockstep: error: ..."
/// line; 3 `generate` could not give a complete output within its limits.
inline constexpr int kExitRejected = 1;
inline constexpr int kExitError = 2;
inline constexpr int kExitIncomplete = 3;

/// Thrown by a command to end with `code` after main() prints `message` (when not empty) as
/// one line on stderr.
struct CommandExit {
  int code;
  std::string message;
};

/// A number option's allowed values, "[lo, hi]" ("(lo, hi]" with `open_lo`; hi may be
/// infinite); `meaning` explains special values in the message ("0: off").
CLI::Validator in_range(double lo, double hi, const std::string& meaning, bool open_lo = false);

/// Each registers its subcommand on `app`; the callback runs it. Errors are thrown
/// (std::exception: exit 2, CommandExit: its own code) and reported by main().
void add_generate(CLI::App& app);
void add_tokenize(CLI::App& app);
void add_convert(CLI::App& app);
void add_bench(CLI::App& app);
void add_check(CLI::App& app);
void add_fuzz(CLI::App& app);
/// Register `maskbench` and `closing` under the `bench` command.
void add_maskbench(CLI::App& bench);
void add_closing_bench(CLI::App& bench);
void add_generation_bench(CLI::App& bench);
void add_speculative_bench(CLI::App& bench);


}  // namespace lockstep::cli
