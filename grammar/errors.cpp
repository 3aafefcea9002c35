// grammar/errors.cpp — see errors.h.
#include "grammar/errors.h"

#include <fmt/format.h>

namespace lockstep {

std::string ErrorLocation::str() const {
  std::string place;
  if (source) {
    place = fmt::format("{}:{}", source->line, source->column);
    return file.empty() ? place : file + ":" + place;
  }
  if (pointer) {
    place = pointer->empty() ? "(root)" : *pointer;
  } else if (byte_offset) {
    place = fmt::format("byte offset {}", *byte_offset);
  }
  if (file.empty()) return place;
  return place.empty() ? file : file + ": " + place;
}

namespace {
std::string compose(const ErrorLocation& where, const std::string& message) {
  const std::string place = where.str();
  return place.empty() ? message : place + ": " + message;
}
}  // namespace

Error::Error(ErrorLocation where, const std::string& message)
    : std::runtime_error(message), where_(std::move(where)), message_(message), what_(compose(where_, message_)) {}

void Error::set_file(const std::string& file) {
  if (!where_.file.empty()) return;
  where_.file = file;
  what_ = compose(where_, message_);
}

bool Error::locate(const ErrorLocation& where) {
  if (where_.source || where_.pointer || where_.byte_offset) return false;
  relocate(where);
  return true;
}

void Error::relocate(const ErrorLocation& where) {
  const std::string file = where.file.empty() ? where_.file : where.file;
  where_ = where;
  where_.file = file;
  what_ = compose(where_, message_);
}

LimitError::LimitError(ErrorLocation where, std::string limit, uint64_t value, const std::string& what_needed)
    : Error(std::move(where), fmt::format("{} exceeds the limit {} = {} (raise it with --limit {}=N)", what_needed,
                                          limit, value, limit)),
      limit_(std::move(limit)),
      value_(value) {}

}  // namespace lockstep
