// runtime/errors.cpp — see errors.h.
#include "runtime/errors.h"

namespace lockstep {

namespace {
// "at /a/b" names a JSON pointer; any other place in words goes in front of the message.
ErrorLocation place(std::string file, const std::string& where) {
  ErrorLocation loc;
  loc.file = std::move(file);
  if (where.rfind("at ", 0) == 0) loc.pointer = where.substr(3) == "/" ? "" : where.substr(3);
  return loc;
}
std::string message_of(const std::string& where, const std::string& message) {
  if (where.empty() || where.rfind("at ", 0) == 0) return message;
  return where + ": " + message;
}
}  // namespace

FileFormatError::FileFormatError(std::string file, std::string where, const std::string& message)
    : Error(place(std::move(file), where), message_of(where, message)) {}

FileFormatError::FileFormatError(std::string file, uint64_t offset, const std::string& message)
    : Error([&] {
        ErrorLocation loc = ErrorLocation::at_offset(offset);
        loc.file = std::move(file);
        return loc;
      }(),
            message) {}

}  // namespace lockstep
