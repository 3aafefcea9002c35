// schemas/number_language.h — JSON number texts with value constraints, as automata.
//
// A JSON number (RFC 8259 §6) is -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?. Comparing
// its value with a constant is a regular property of the text as long as there is no
// exponent (with one it needs arithmetic on the exponent), so value-constrained numbers are
// written without exponent; unconstrained ones may use it. Integers (JSON Schema: numbers
// with a zero fractional part) are written -?(0|[1-9][0-9]*)(\.0+)?.
#pragma once

#include <cstdint>
#include <string>

#include "grammar/char_dfa.h"

namespace lockstep {

/// An exact decimal value: sign, integer digits (no leading zeros; "0" for zero) and
/// fraction digits (no trailing zeros).
struct Decimal {
  bool negative = false;
  std::string int_digits = "0";
  std::string frac_digits;
  bool is_zero() const { return int_digits == "0" && frac_digits.empty(); }
  bool is_integer() const { return frac_digits.empty(); }
  /// Parses a JSON number text (exponents allowed). Throws std::invalid_argument.
  static Decimal parse(std::string_view text);
  /// The shortest text that reads back as `value` (round-trip exact for doubles).
  static Decimal from_double(double value);
  std::string to_string() const;
};

/// Texts of every number without exponent.
const CharDfa& plain_numbers();
/// Texts of every number with an exponent.
const CharDfa& exponent_numbers();
/// Texts of integer values without exponent: -?(0|[1-9][0-9]*)(\.0+)?
const CharDfa& integer_numbers();
/// Texts of integers without fraction or exponent: -?(0|[1-9][0-9]*) (draft 4's "integer").
const CharDfa& integer_numbers_without_fraction();
/// Plain number texts whose value v satisfies v ≥ c (v > c when `strict`).
CharDfa numbers_at_least(const Decimal& c, bool strict);
/// Plain number texts whose value v satisfies v ≤ c (v < c when `strict`).
CharDfa numbers_at_most(const Decimal& c, bool strict);
/// Plain number texts whose value is a multiple of m (> 0). Throws std::invalid_argument
/// when m's digits make the automaton larger than `max_states`.
CharDfa numbers_multiple_of(const Decimal& m, size_t max_states = 20000);

}  // namespace lockstep
