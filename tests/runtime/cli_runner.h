// tests/runtime/cli_runner.h — runs the `lockstep` binary (and the ajv validators) the way a user does.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/test_data.h"

namespace lockstep {

struct CliResult {
  int exit_code;
  std::string out, err;
};

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''"; else q += c;
  }
  return q + "'";
}

inline CliResult run_cli(const std::vector<std::string>& args) {
  // ctest runs tests in parallel processes: the file names carry the process id.
  const auto dir = std::filesystem::temp_directory_path();
  const std::string pid = std::to_string(::getpid());
  const std::string out = (dir / ("lockstep_cli_out." + pid)).string();
  const std::string err = (dir / ("lockstep_cli_err." + pid)).string();
  std::string cmd = quote(LOCKSTEP_CLI);
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " >" + quote(out) + " 2>" + quote(err) + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, test_data::read_file(out),
              test_data::read_file(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

inline size_t lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

struct TempFile {
  std::filesystem::path path;
  TempFile(const std::string& name, const std::string& bytes)
      : path(std::filesystem::temp_directory_path() / name) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

// One line, "<place>: error: <message>" (place: file:line:column, file: pointer, file: byte
// offset N, --regex:line:column) or "lockstep: error: <message>" when there is no place.
// `fragment` is looked for in the line with " error:" taken out ("file:2:14: unterminated…").
inline void expect_one_line_error(const CliResult& r, const std::string& fragment) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  const size_t tag = r.err.find(": error: ");
  EXPECT_NE(tag, std::string::npos) << r.err;
  if (tag == std::string::npos) return;
  EXPECT_GT(tag, 0u) << r.err;
  const std::string place = r.err.substr(0, tag);
  const std::string message = r.err.substr(tag + 9);
  const std::string plain = place == "lockstep" ? message : place + ": " + message;
  EXPECT_NE(plain.find(fragment), std::string::npos) << r.err;
}

// Runs one of the node validators in tests/node (ajv); its exit code.
inline int run_validator(const std::string& script, const std::string& schema_or_tools, const std::string& document) {
  const std::filesystem::path path = std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "tests/node" / script;
  const std::string cmd = "node " + quote(path.string()) + " " + quote(schema_or_tools) + " " + quote(document) +
                          " >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace lockstep
