// runtime/errors.h — errors for malformed model and tokenizer files.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "grammar/errors.h"

namespace lockstep {

/// A file that cannot be used as it is. what() reads "<file>: <where>: <message>", where
/// <where> is a byte offset ("byte offset 1234") or a JSON pointer ("at /model/vocab").
class FileFormatError : public Error {
 public:
  /// `where`: "" or a place in words ("byte offset 12", "at /model/vocab").
  FileFormatError(std::string file, std::string where, const std::string& message);
  /// At a byte offset of the file.
  FileFormatError(std::string file, uint64_t offset, const std::string& message);
  const std::string& file() const { return location().file; }
};

/// A model weights file (llama2.c checkpoint, GGUF) that is truncated, inconsistent or
/// of an unsupported kind.
class ModelFormatError : public FileFormatError {
 public:
  ModelFormatError(std::string file, uint64_t offset, const std::string& message)
      : FileFormatError(std::move(file), offset, message) {}
  uint64_t offset() const { return *location().byte_offset; }
};

/// A tokenizer file (tokenizer.bin, tokenizer.json, vocab files) that cannot be used.
class TokenizerError : public FileFormatError {
 public:
  using FileFormatError::FileFormatError;
  /// Error at a byte offset of a binary file.
  TokenizerError(std::string file, uint64_t offset, const std::string& message)
      : FileFormatError(std::move(file), offset, message) {}
};

}  // namespace lockstep
