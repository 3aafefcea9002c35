// Hostile input files (tokenizers, models, grammars): each is a clear error naming the
// file and where, never a crash, a raw library exception or an unbounded allocation.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "runtime/errors.h"
#include "runtime/mapped_file.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// A fresh folder under the temp directory, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() : path(fs::temp_directory_path() / ("lockstep_hostile_" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path / name, std::ios::binary) << bytes;
    return (path / name).string();
  }
};

TEST(HostileFiles, ReadingStopsAtTheLimit) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    read_file("/dev/zero");
    FAIL() << "/dev/zero was read";
  } catch (const FileFormatError& e) {
    EXPECT_STREQ(e.what(), "/dev/zero: file larger than the 64 MiB limit");
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  TempDir dir;
  const std::string path = dir.write("big.gbnf", std::string(2000, 'x'));
  EXPECT_EQ(read_file(path, 2000).size(), 2000u);
  try {
    read_file(path, 1999);
    FAIL() << "read past the limit";
  } catch (const FileFormatError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": file larger than the 1999-byte limit");
  }
}

}  // namespace
}  // namespace lockstep
