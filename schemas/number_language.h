// schemas/number_language.h — JSON number texts with value constraints, as automata.
//
// A JSON number (RFC 8259 §6) is -?M([eE][+-]?[0-9]+)? with mantissa M =
// (0|[1-9][0-9]*)(\.[0-9]+)?. Its value is value(M)·10^X. Texts without exponent ("plain")
// are decided exactly under every constraint here. Comparing value(M)·10^X with a constant
// is not a regular property of the text in general (the mantissa's integer-part length is
// counted in unary, the exponent in decimal), so texts with an exponent are decided exactly
// inside a cap on the mantissa:
//
//   the exact region = every plain text, and every exponent text whose mantissa is zero, or
//   has at most kExactScale (20) integer digits and a fraction that is empty, exactly "0",
//   or ends in a non-zero digit at most kExactScale places after the point; the exponent X
//   may be anything: any number of digits, leading zeros, either sign.
//
// Every serializer's output is inside (Python, JavaScript, Java, Go write at most 17
// significant digits with one integer digit, Java "1.0E10"). Each constrained language below
// is exact on the exact region and sound outside it: a text outside is accepted only if its
// value satisfies the constraint. Comparisons and constants are exact on a larger region
// (any fraction; region_numbers(true, false)), multiples and integers on another
// (region_numbers(false, true)); the complement of a language taken within its region is
// exact there and sound everywhere, so a text outside is rejected by both.
//
// Construction (number_automaton.h, number_conditions.h): the mantissa is walked by a
// finite-state condition that tracks its scale p (integer digits, or minus the zeros after
// "0." before the first significant digit) and the order of its significant digits against
// the constant's; value ≥ c = 0.C·10^q then needs X ≥ q − p (+1 when the digits are below
// C's), an interval of exponents decided by a decimal-integer range automaton. For
// multiples of m = M'·10^s, M' = 2^a·5^b·r with gcd(r, 10) = 1, a·b = 0: a mantissa with
// digits N = N0·10^t (N0 not divisible by 10) and f fraction digits is N·10^(X−f), a multiple
// iff r | N0 and X ≥ s + δ − (t − f) where δ = max(0, a − v2(N0), b − v5(N0)); the walk
// tracks N mod r, N0 mod 2^a·5^b, t and the last non-zero fraction position. A conjunction
// is one walk over the tuple of its parts (exponent intervals intersected), not a product
// of automata.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "grammar/char_dfa.h"

namespace lockstep {

/// The cap on the mantissa's scale for exact decisions on exponent texts (see above).
inline constexpr int kExactScale = 20;

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

/// Every JSON number text.
const CharDfa& all_numbers();
/// Texts of every number without exponent.
const CharDfa& plain_numbers();
/// The exact region: plain texts and exponent texts within the cap (see above).
const CharDfa& exact_numbers();
/// Integers of drafts ≥ 6 (numbers with a zero fractional part: 1.0, 1e5, 1.5e1, 100e-2).
const CharDfa& integer_numbers();
/// Texts of integers without fraction or exponent: -?(0|[1-9][0-9]*) (draft 4's "integer").
const CharDfa& integer_numbers_without_fraction();

/// States a number walk may reach (before minimization) by default.
inline constexpr size_t kMaxNumberStates = 20000;

/// A conjunction of value constraints (none: every number).
struct NumberConstraints {
  struct Bound {
    Decimal value;
    bool strict = false;
  };
  std::vector<Bound> at_least, at_most;  ///< v ≥ c (v > c when strict); v ≤ c (v < c)
  std::vector<Decimal> multiple_of;      ///< v = k·m for an integer k; each m > 0
  /// v ≠ k·m for every integer k; each m > 0. Exact on the multiples' region (a set with one
  /// is the complement of the multiples within region_numbers(false, true)).
  std::vector<Decimal> not_multiple_of;
  bool integer = false;                  ///< a zero fractional part (drafts ≥ 6)
  bool empty() const;
  /// A canonical text: equal keys, equal constraints.
  std::string key() const;
};

/// `c` with one bound a side, its tightest, moved to zero where c's multiples leave no value
/// between the bound and zero: with L the least common multiple of its multipleOf (and 1
/// for an integer), v ≥ x among multiples of L is v > 0 for 0 < x ≤ L and v ≥ 0 for
/// −L < x ≤ 0 (strict bounds alike, and mirrored for v ≤ x). The same values. A bound at
/// zero is read from the sign and the first digit, where any other bound beside multipleOf
/// is walked (or taken as a product of automata) over the scale of the number too
/// (number_sets.h: such a set is exact on the multiples' region).
NumberConstraints with_bounds_at_zero(const NumberConstraints& c);

/// The least common multiple of positive decimals (v is a multiple of every m exactly when
/// it is one of it), when it is below 10^19; nullopt otherwise or for an m that is not > 0.
std::optional<Decimal> least_common_multiple(const std::vector<Decimal>& multiples);

/// Texts whose value satisfies every constraint of `c`, built in one walk (a conjunction is
/// not the product of its parts' automata); without `exponents`, only plain texts. Throws
/// std::invalid_argument for a multipleOf that is not > 0 or has more than 18 significant
/// digits, or when the walk would pass `max_states` states (with exponents a multiple of
/// m = 2^a·5^b·r·10^s walks about kExactScale² states plus about 3·kExactScale per residue of
/// N modulo r past the first, more for a large 2^a·5^b: multipleOf 33 2,480 states, 2.5 1,367;
/// plain texts alone about (fraction digits of m + 3) per residue).
CharDfa numbers_satisfying(const NumberConstraints& c, bool exponents = true, size_t max_states = kMaxNumberStates);
/// Single constraints, as numbers_satisfying.
CharDfa numbers_at_least(const Decimal& c, bool strict, bool exponents = true);
CharDfa numbers_at_most(const Decimal& c, bool strict, bool exponents = true);
CharDfa numbers_multiple_of(const Decimal& m, bool exponents = true, size_t max_states = kMaxNumberStates);
/// Texts whose value equals c.
CharDfa numbers_equal(const Decimal& c);
/// Texts whose value is one of `values` (an enum), in one walk over a trie of their digits;
/// without `exponents`, only plain texts. Throws std::invalid_argument past `max_states`
/// states (before minimization). With `plain` given, a refusal the walk with exponents is
/// known to meet before it starts (its lower bound on states is over `max_states`) first
/// stores there the plain texts' automaton: from the same tries, or, for integers whose
/// refusal the minimal automaton of their significant digits already settles, from the
/// automaton of their digit texts (no tries built).
CharDfa numbers_in(const std::vector<Decimal>& values, bool exponents = true, size_t max_states = CharDfa::max_states(),
                   std::optional<CharDfa>* plain = nullptr);
/// Where the languages above decide exponent texts exactly, each a superset of
/// exact_numbers(): comparisons and constants (`compare`) within the cap on integer digits
/// and leading fraction zeros; multiples and integers (`multiple`) within the cap on the
/// fraction's last non-zero digit and the integer part's trailing zeros, for fractions that
/// are empty, exactly "0" or end in a non-zero digit. Neither: every number text.
const CharDfa& region_numbers(bool compare, bool multiple);
/// What serializers write (JSON_Schema_Options::canonical_numbers): no leading zeros, no
/// negative zero, a fraction that ends in a non-zero digit or is exactly ".0", at most 17
/// significant digits (from the first non-zero digit to the last digit of the mantissa),
/// exponent form only as -?[1-9](\.[0-9]*[1-9])?[eE][+-]?(0?[1-9]|[1-9][0-9]|[12][0-9][0-9]|3[01][0-9]|32[0-4])
/// (the exponents of doubles, with Python's two-digit "e-06").
const CharDfa& canonical_numbers();

}  // namespace lockstep
