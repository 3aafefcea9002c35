// runtime/cli/validators.cpp — see commands.h.
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "runtime/cli/commands.h"

namespace lockstep::cli {

// A number option's allowed values: "[lo, hi]" with open ends where `open_lo` / `open_hi`.
CLI::Validator in_range(double lo, double hi, const std::string& meaning, bool open_lo) {
  const std::string range = fmt::format("{}{}, {}]", open_lo ? "(" : "[", lo, std::isinf(hi) ? "∞" : fmt::format("{}", hi));
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double v;
        try {
          size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return {};  // not a number: CLI11's conversion error says so
        } catch (const std::exception&) {
          return {};
        }
        const bool ok = std::isfinite(v) && (open_lo ? v > lo : v >= lo) && v <= hi;
        return ok ? std::string() : fmt::format("{} is outside {}{}", text, range, meaning.empty() ? "" : " (" + meaning + ")");
      },
      range);
}

}  // namespace lockstep::cli
