// runtime/errors.h — errors for malformed model and tokenizer files.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace lockstep {

/// A file that cannot be used as it is. what() reads "<file>: <where>: <message>", where
/// <where> is a byte offset ("byte offset 1234") or a JSON pointer ("at /model/vocab").
class FileFormatError : public std::runtime_error {
 public:
  FileFormatError(std::string file, std::string where, const std::string& message);
  const std::string& file() const { return file_; }
  const std::string& where() const { return where_; }

 private:
  std::string file_;
  std::string where_;
};

/// A model weights file (llama2.c checkpoint, GGUF) that is truncated, inconsistent or
/// of an unsupported kind.
class ModelFormatError : public FileFormatError {
 public:
  ModelFormatError(std::string file, uint64_t offset, const std::string& message);
  uint64_t offset() const { return offset_; }

 private:
  uint64_t offset_;
};

/// A tokenizer file (tokenizer.bin, tokenizer.json, vocab files) that cannot be used.
class TokenizerError : public FileFormatError {
 public:
  using FileFormatError::FileFormatError;
  /// Error at a byte offset of a binary file.
  TokenizerError(std::string file, uint64_t offset, const std::string& message);
};

}  // namespace lockstep
