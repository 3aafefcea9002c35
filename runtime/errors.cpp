// runtime/errors.cpp — see errors.h.
#include "runtime/errors.h"

#include <fmt/format.h>

namespace lockstep {

FileFormatError::FileFormatError(std::string file, std::string where, const std::string& message)
    : std::runtime_error(where.empty() ? fmt::format("{}: {}", file, message)
                                       : fmt::format("{}: {}: {}", file, where, message)),
      file_(std::move(file)),
      where_(std::move(where)) {}

ModelFormatError::ModelFormatError(std::string file, uint64_t offset, const std::string& message)
    : FileFormatError(std::move(file), fmt::format("byte offset {}", offset), message),
      offset_(offset) {}

TokenizerError::TokenizerError(std::string file, uint64_t offset, const std::string& message)
    : FileFormatError(std::move(file), fmt::format("byte offset {}", offset), message) {}

}  // namespace lockstep
