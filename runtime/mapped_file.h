// runtime/mapped_file.h — a read-only memory-mapped file (POSIX mmap), RAII.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep {

class MappedFile {
 public:
  /// Maps `path` read-only. Throws std::runtime_error naming the path when it cannot be
  /// opened or mapped. An empty file maps to an empty view.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view view() const { return {reinterpret_cast<const char*>(data_), size_}; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

/// Reads a whole file into a string, at most `max_bytes` of it (0: EngineLimits::source_bytes,
/// 64 MiB by default: grammars, schemas, tool lists, `check` inputs), so `--grammar /dev/zero`
/// fails at once instead of eating memory. Throws std::runtime_error naming the path when it
/// cannot be read, FileFormatError ("file larger than the 64 MiB limit") when it holds more
/// than `max_bytes` — found without reading a regular file, and after max_bytes + 1 bytes of
/// anything else (a device, a pipe).
std::string read_file(const std::string& path, size_t max_bytes = 0);

}  // namespace lockstep
