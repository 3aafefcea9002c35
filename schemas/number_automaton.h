// schemas/number_automaton.h — automata of JSON number texts decided by a walk over the mantissa.
//
// A number text is -?M([eE][+-]?X)? with mantissa M = (0|[1-9][0-9]*)(\.[0-9]+)? and exponent
// X = [0-9]+ (any count of digits, leading zeros allowed). Its value is value(M)·10^X, so a
// condition on the value can be read in two steps: walk M through a finite-state Condition,
// which at the end of M says whether the text without exponent is accepted and which
// exponents X (an interval) make the text accepted. The automaton is that walk followed by an
// exact decimal-integer range automaton for X, one per distinct interval. Internal to the
// number languages (number_language.cpp, number_conditions.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "grammar/char_dfa.h"

namespace lockstep::number_automaton {

inline constexpr int64_t kMinusInfinity = INT32_MIN;
inline constexpr int64_t kPlusInfinity = INT32_MAX;

/// What a Condition says about a mantissa once it is read: the text without exponent is
/// accepted iff `plain`; with exponent X iff lo ≤ X ≤ hi (no exponent when lo > hi; the
/// infinities leave a side open).
struct Verdict {
  bool plain = false;
  int64_t lo = 1, hi = 0;
  static Verdict none() { return {}; }
  static Verdict all() { return {true, kMinusInfinity, kPlusInfinity}; }
};

/// Bounds on the exponents any continuation of a mantissa can be accepted with: after k more
/// integer digits and any fraction, every exponent accepted (the plain text counting as
/// X = 0) lies in [a − k, b − k]. Infinities: no bound. Used to drop states no text leads on
/// from, and sound only if it never excludes an accepted text.
struct Reach {
  int64_t a = kMinusInfinity, b = kPlusInfinity;
};

/// A condition on the magnitude of an unsigned number text, as a deterministic walk over its
/// mantissa. States are opaque 64-bit keys (equal keys: equal states); the walk sees the
/// digits and the '.' of a syntactically valid mantissa.
class Condition {
 public:
  static constexpr uint64_t kReject = UINT64_MAX;
  virtual ~Condition() = default;
  virtual uint64_t start() const = 0;
  /// The state after `c` ('0'..'9' or '.'), or kReject when no continuation is accepted.
  virtual uint64_t step(uint64_t state, char c) const = 0;
  virtual Verdict end(uint64_t state) const = 0;
  virtual Reach reach(uint64_t) const { return {}; }
  /// True when every continuation of the mantissa from `state` ends with verdict `v` (the
  /// walk's remaining steps change nothing that matters).
  virtual bool fixed(uint64_t, Verdict&) const { return false; }
  /// For a condition whose exponents at the end of a mantissa are not one interval (a union
  /// of conditions): appends them to `out` as intervals [lo, hi] (overlapping or not, in any
  /// order) and returns true; end() then says only whether the plain text is accepted.
  /// False (the default): end()'s interval.
  virtual bool intervals(uint64_t, std::vector<std::pair<int64_t, int64_t>>&) const { return false; }
  /// Whether a step costs more than finding it again in a table (a conjunction then keeps
  /// its parts' steps): false for the walks of a few bit operations.
  virtual bool costly_steps() const { return false; }
};

/// Texts whose magnitude (the text after an optional '-') satisfies `nonnegative` when there
/// is no '-' and `negative` when there is one (nullptr: no such text). Without `exponents`,
/// only texts without exponent. A minimized automaton. Throws std::length_error when the
/// walk reaches more than `max_states` states.
CharDfa build(const Condition* nonnegative, const Condition* negative, bool exponents, size_t max_states);

/// Exponent texts [+-]?[0-9]+ whose value lies in [lo, hi] (infinities: open), minimized;
/// memoized process-wide.
const CharDfa& exponents_between(int64_t lo, int64_t hi);

}  // namespace lockstep::number_automaton
