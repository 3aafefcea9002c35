// include/lockstep/errors.h — the errors lockstep raises, each with its location.
//
// Every error lockstep throws derives from lockstep::Error (itself a std::runtime_error):
// GrammarError (line:column in a grammar or regex), SchemaError (JSON pointer),
// FileFormatError and its subclasses TokenizerError and ModelFormatError (file plus byte
// offset or JSON pointer), LimitError (an EngineLimits value exceeded, see
// lockstep/limits.h). A caller that only wants "is this lockstep's clear error or a bug?"
// catches lockstep::Error. Errors are plain values: copy them across threads freely.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace lockstep {


/// A position in a source text (grammar file, regex): 1-based line and column
/// (columns count bytes), plus the 0-based byte offset.
struct SourceLocation {
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t offset = 0;
};

/// Where an error is. Any part may be missing: `file` names the input ("grammar.gbnf",
/// "--regex"); then at most one of a line:column, a JSON pointer, a byte offset.
struct ErrorLocation {
  std::string file;
  std::optional<SourceLocation> source;
  std::optional<std::string> pointer;  ///< RFC 6901; "" is the document root
  std::optional<uint64_t> byte_offset;

  /// A line:column; none when `where.line` is 0 (unknown).
  static ErrorLocation at(SourceLocation where) {
    if (where.line == 0) return {};
    return {"", where, std::nullopt, std::nullopt};
  }
  static ErrorLocation at_pointer(std::string pointer) { return {"", std::nullopt, std::move(pointer), std::nullopt}; }
  static ErrorLocation at_offset(uint64_t offset) { return {"", std::nullopt, std::nullopt, offset}; }

  bool empty() const { return file.empty() && !source && !pointer && !byte_offset; }
  /// "file:line:column", "file: /a/0", "file: byte offset 12", "line:column", "/a/0",
  /// "(root)" for the empty pointer; "" when nothing is known.
  std::string str() const;
};

class Error : public std::runtime_error {
 public:
  Error(ErrorLocation where, const std::string& message);
  explicit Error(const std::string& message) : Error(ErrorLocation{}, message) {}

  const ErrorLocation& location() const { return where_; }
  /// The message without its location.
  const std::string& message() const { return message_; }
  /// "<location>: <message>", or the message alone when the location is empty.
  const char* what() const noexcept override { return what_.c_str(); }

  /// Names the input the error is in, when the thrower did not know it (a parser given a
  /// string); a file already named is kept.
  void set_file(const std::string& file);
  /// Places the error, when the thrower did not know where it was (no line:column, pointer
  /// or byte offset yet); a known place is kept. Returns whether it placed it.
  bool locate(const ErrorLocation& where);
  /// Replaces the place (the file is kept): a JSON pointer within a document nested in
  /// another becomes a pointer from the outer document's root.
  void relocate(const ErrorLocation& where);

 private:
  ErrorLocation where_;
  std::string message_;
  std::string what_;
};

/// An input needs more than one of the EngineLimits allows. The message names the limit,
/// its value and how to raise it (`--limit <name>=N`, EngineLimits::<name>).
class LimitError : public Error {
 public:
  /// `what`: what exceeded it, as a noun phrase ("the repetition bound 1000001").
  LimitError(ErrorLocation where, std::string limit, uint64_t value, const std::string& what);
  const std::string& limit() const { return limit_; }
  uint64_t value() const { return value_; }

 private:
  std::string limit_;
  uint64_t value_;
};

/// A malformed or unusable grammar or regular expression. what() reads
/// "line:column: message" (the file, when known, in front: "file:line:column: message").
class GrammarError : public Error {
 public:
  GrammarError(SourceLocation where, const std::string& message);
  /// Location-free error (e.g. a whole-grammar property such as "no root rule").
  explicit GrammarError(const std::string& message);
  /// The line:column (zeros when the error has none).
  SourceLocation where() const { return location().source.value_or(SourceLocation{}); }
};

/// A JSON Schema (or tool definition) that cannot be compiled. what() reads
/// "<JSON pointer>: <message>" ("(root)" for the whole schema; the file, when known, in front).
class SchemaError : public Error {
 public:
  SchemaError(std::string pointer, const std::string& message)
      : Error(ErrorLocation::at_pointer(std::move(pointer)), message) {}
  const std::string& pointer() const { return *location().pointer; }
};

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

/// A tokenizer file (tokenizer.bin, tokenizer.json, vocab files) or token list that cannot
/// be used.
class TokenizerError : public FileFormatError {
 public:
  using FileFormatError::FileFormatError;
  /// Error at a byte offset of a binary file.
  TokenizerError(std::string file, uint64_t offset, const std::string& message)
      : FileFormatError(std::move(file), offset, message) {}
};

}  // namespace lockstep
