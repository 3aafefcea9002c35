// runtime/cli/json_files.h — the .json files the benchmark commands read from their inputs.
#pragma once

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace lockstep::cli {

/// Every .json file under each input folder (recursively) and every input file, sorted.
/// Throws std::runtime_error naming an input that is neither.
inline std::vector<std::filesystem::path> json_files(const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& in : inputs) {
    if (fs::is_directory(in)) {
      for (const auto& e : fs::recursive_directory_iterator(in)) {
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
      }
    } else if (fs::is_regular_file(in)) {
      files.push_back(in);
    } else {
      throw std::runtime_error(fmt::format("{}: no such file or folder", in));
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace lockstep::cli
