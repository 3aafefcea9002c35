// runtime/cli/main.cpp — `lockstep`: grammar-constrained generation and its tools.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>
#if LOCKSTEP_MIMALLOC
#include <mimalloc.h>
#endif

#include "grammar/errors.h"
#include "runtime/cli/commands.h"

namespace {

// The allocator this executable runs with (CMake option LOCKSTEP_MIMALLOC).
std::string allocator_name() {
#if LOCKSTEP_MIMALLOC
  const int v = mi_version();
  return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10);
#else
  return "the C library's malloc";
#endif
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lockstep::cli;
  CLI::App app{"lockstep — grammar-constrained decoding"};
  app.set_version_flag("--version", std::string("lockstep ") + LOCKSTEP_VERSION + "\nallocator: " + allocator_name());
  app.require_subcommand(1);
  add_generate(app);
  add_tokenize(app);
  add_convert(app);
  add_bench(app);
  add_check(app);
  add_fuzz(app);
  if (argc >= 2 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->get_name() == argv[1];
    }
    if (!known) {
      std::fprintf(stderr, "lockstep: error: unknown command '%s' (commands: %s; see lockstep --help)\n", argv[1],
                   names.c_str());
      return kExitError;
    }
  }
  if (argc == 1) {
    std::fputs(app.help().c_str(), stderr);
    return kExitError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "lockstep: error: %s (see --help)\n", e.what());
    return kExitError;
  } catch (const CommandExit& e) {
    std::fflush(stdout);
    if (!e.message.empty()) std::fprintf(stderr, "%s\n", e.message.c_str());
    return e.code;
  } catch (const lockstep::Error& e) {
    std::fflush(stdout);
    const std::string place = e.location().str();
    std::fprintf(stderr, "%s: error: %s\n", place.empty() ? "lockstep" : place.c_str(), e.message().c_str());
    return kExitError;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "lockstep: error: %s\n", e.what());
    return kExitError;
  }
  return 0;
}
