// tests/test_data.h — where the shared, read-only test data lives, and small file helpers.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace lockstep::test_data {

/// ../shared next to the checkout (set by CMake), or $LOCKSTEP_SHARED_DIR.
inline std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("LOCKSTEP_SHARED_DIR")) return env;
  return LOCKSTEP_SHARED_DIR;
}

inline std::filesystem::path shared(const std::string& relative) { return shared_dir() / relative; }

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open test data file " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Files in `dir` whose names end in `suffix`, sorted.
inline std::vector<std::filesystem::path> files_with_suffix(const std::filesystem::path& dir,
                                                            const std::string& suffix) {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(entry.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<std::filesystem::path> llama_cpp_grammar_files() {
  return files_with_suffix(shared("grammars/llama.cpp"), ".gbnf");
}

}  // namespace lockstep::test_data
