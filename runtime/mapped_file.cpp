// runtime/mapped_file.cpp — see mapped_file.h.
#include "runtime/mapped_file.h"

#include "grammar/limits.h"

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <stdexcept>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "runtime/errors.h"

namespace lockstep {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error(fmt::format("{}: not a regular file", path));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(fmt::format("{}: cannot map: {}", path, std::strerror(err)));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    path_ = std::move(other.path_);
    data_ = other.data_;
    size_ = other.size_;
    other.data_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

std::string read_file(const std::string& path, size_t max_bytes) {
  const bool source_limit = max_bytes == 0;
  if (source_limit) max_bytes = static_cast<size_t>(engine_limits().source_bytes);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  auto too_large = [&] {
    const std::string limit = max_bytes % (1 << 20) == 0 ? fmt::format("{} MiB", max_bytes >> 20)
                                                         : fmt::format("{}-byte", max_bytes);
    return FileFormatError(path, "", fmt::format("file larger than the {} limit{}", limit,
                                                 source_limit ? " (raise it with --limit source_bytes=N)" : ""));
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::runtime_error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) throw std::runtime_error(fmt::format("{}: cannot read: it is a directory", path));
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes) throw too_large();
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  constexpr size_t kChunk = size_t{1} << 20;
  for (;;) {
    // Read up to one byte past the limit: a file that reaches it is too large.
    const size_t want = std::min(kChunk, max_bytes + 1 - out.size());
    const size_t at = out.size();
    out.resize(at + want);
    const ssize_t got = ::read(fd, out.data() + at, want);
    if (got < 0) {
      if (errno == EINTR) {
        out.resize(at);
        continue;
      }
      throw std::runtime_error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    }
    out.resize(at + static_cast<size_t>(got));
    if (got == 0) break;
    if (out.size() > max_bytes) throw too_large();
  }
  return out;
}

}  // namespace lockstep
