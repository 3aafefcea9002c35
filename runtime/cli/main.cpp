// runtime/cli/main.cpp — `lockstep`: grammar-constrained generation and its tools.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "runtime/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"lockstep — grammar-constrained decoding"};
  app.require_subcommand(1);
  lockstep::cli::add_generate(app);
  lockstep::cli::add_tokenize(app);
  lockstep::cli::add_convert(app);
  lockstep::cli::add_bench(app);
  lockstep::cli::add_check(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "lockstep: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
