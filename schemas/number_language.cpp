// schemas/number_language.cpp — see number_language.h.
#include "schemas/number_language.h"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "schemas/number_conditions.h"

namespace lockstep {

Decimal Decimal::parse(std::string_view text) {
  size_t i = 0;
  Decimal d;
  if (i < text.size() && text[i] == '-') d.negative = true, ++i;
  std::string digits;
  long exponent = 0;  // value = digits × 10^exponent
  bool any = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) digits += text[i++], any = true;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) digits += text[i++], --exponent, any = true;
  }
  if (!any) throw std::invalid_argument(fmt::format("'{}' is not a number", text));
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) neg = text[i++] == '-';
    long e = 0;
    bool exp_digits = false;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      e = std::min<long>(e * 10 + (text[i++] - '0'), 100000);
      exp_digits = true;
    }
    if (!exp_digits) throw std::invalid_argument(fmt::format("'{}' is not a number", text));
    exponent += neg ? -e : e;
  }
  if (i != text.size()) throw std::invalid_argument(fmt::format("'{}' is not a number", text));
  if (exponent > 100000 || exponent < -100000) throw std::invalid_argument("number exponent too large");
  // Place the decimal point.
  std::string int_part, frac_part;
  if (exponent >= 0) {
    int_part = digits + std::string(static_cast<size_t>(exponent), '0');
  } else {
    const size_t shift = static_cast<size_t>(-exponent);
    if (shift >= digits.size()) {
      int_part = "0";
      frac_part = std::string(shift - digits.size(), '0') + digits;
    } else {
      int_part = digits.substr(0, digits.size() - shift);
      frac_part = digits.substr(digits.size() - shift);
    }
  }
  const size_t nz = int_part.find_first_not_of('0');
  d.int_digits = nz == std::string::npos ? "0" : int_part.substr(nz);
  const size_t last = frac_part.find_last_not_of('0');
  d.frac_digits = last == std::string::npos ? "" : frac_part.substr(0, last + 1);
  if (d.is_zero()) d.negative = false;
  return d;
}

Decimal Decimal::from_double(double value) { return parse(fmt::format("{}", value)); }

std::string Decimal::to_string() const {
  return (negative ? "-" : "") + int_digits + (frac_digits.empty() ? "" : "." + frac_digits);
}

namespace {

using number_automaton::Condition;
using namespace number_conditions;

CharDfa dfa_of(const std::string& regex) { return CharDfa::from_expr(regex_to_expr(regex)); }

Decimal magnitude(const Decimal& c) {
  Decimal m = c;
  m.negative = false;
  return m;
}

// The conditions of a conjunction on each sign's magnitudes; `none` marks a sign no text of
// that sign satisfies.
struct Sides {
  std::vector<std::unique_ptr<Condition>> owned;
  std::vector<const Condition*> parts[2];  // nonnegative, negative
  bool none[2] = {false, false};
  const Condition* own(std::unique_ptr<Condition> c) {
    owned.push_back(std::move(c));
    return owned.back().get();
  }
  void add(int side, const Condition* c) { parts[side].push_back(c); }
  void add_bound(const Decimal& c, bool at_least, bool strict, int cap) {
    // Which sign is bounded by the magnitude (and how), which is unconstrained, which empty.
    const int bounded = c.is_zero() ? (at_least ? 1 : 0) : c.negative ? 1 : 0;
    const int other = 1 - bounded;
    const bool same_way = at_least != (bounded == 1);  // |v| ≥ |c| on the bounded side?
    if (c.is_zero()) {
      // v ≥ 0: negative texts are zeros; v > 0: positive texts are non-zero, no negative.
      // v ≤ 0: positive texts are zeros; v < 0: negative texts are non-zero, no positive.
      const int zero_side = at_least ? 1 : 0;
      if (strict) {
        none[zero_side] = true;
        add(1 - zero_side, own(std::make_unique<ZeroMagnitude>(false)));
      } else {
        add(zero_side, own(std::make_unique<ZeroMagnitude>(true)));
      }
      return;
    }
    // c > 0, at least: positive texts |v| ≥ c, no negative; c > 0, at most: positive texts
    // |v| ≤ c, every negative; c < 0 mirrored.
    using M = Compare::Mode;
    const M mode = same_way ? (strict ? M::kGt : M::kGe) : (strict ? M::kLt : M::kLe);
    add(bounded, own(std::make_unique<Compare>(magnitude(c), mode, cap)));
    if (same_way) none[other] = true;
  }
  // The condition of one sign (nullptr: none).
  const Condition* side(int s) {
    if (none[s]) return nullptr;
    std::vector<const Condition*> list = parts[s];
    if (list.empty()) return own(std::make_unique<AnyMagnitude>());
    while (list.size() > Conjunction::kMaxParts) {  // nested: a conjunction of conjunctions
      std::vector<const Condition*> tail(list.end() - Conjunction::kMaxParts, list.end());
      list.resize(list.size() - Conjunction::kMaxParts);
      list.push_back(own(std::make_unique<Conjunction>(std::move(tail))));
    }
    if (list.size() == 1) return list[0];
    return own(std::make_unique<Conjunction>(std::move(list)));
  }
};

CharDfa build(Sides& sides, bool exponents, size_t max_states) {
  const Condition* pos = sides.side(0);
  const Condition* neg = sides.side(1);
  try {
    return number_automaton::build(pos, neg, exponents, max_states);
  } catch (const std::length_error&) {
    throw std::invalid_argument(fmt::format("the number constraints need more than {} automaton states", max_states));
  }
}

}  // namespace

bool NumberConstraints::empty() const {
  return at_least.empty() && at_most.empty() && multiple_of.empty() && not_multiple_of.empty() && !integer;
}

std::string NumberConstraints::key() const {
  std::string k;
  for (const auto& b : at_least) k += (b.strict ? ">" : ">=") + b.value.to_string() + ";";
  for (const auto& b : at_most) k += (b.strict ? "<" : "<=") + b.value.to_string() + ";";
  for (const auto& m : multiple_of) k += "*" + m.to_string() + ";";
  for (const auto& m : not_multiple_of) k += "!*" + m.to_string() + ";";
  if (integer) k += "int;";
  return k;
}

namespace {

// Compares two decimals: -1, 0, 1.
int compare(const Decimal& a, const Decimal& b) {
  if (a.is_zero() && b.is_zero()) return 0;
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  const int sign = a.negative ? -1 : 1;
  if (a.int_digits.size() != b.int_digits.size()) return sign * (a.int_digits.size() < b.int_digits.size() ? -1 : 1);
  if (a.int_digits != b.int_digits) return sign * (a.int_digits < b.int_digits ? -1 : 1);
  if (a.frac_digits == b.frac_digits) return 0;
  return sign * (a.frac_digits < b.frac_digits ? -1 : 1);  // no trailing zeros: lexicographic is numeric
}

// The tightest of `bounds` (v ≥ c when `lower`, else v ≤ c): a conjunction of bounds is that one.
std::optional<NumberConstraints::Bound> tightest(const std::vector<NumberConstraints::Bound>& bounds, bool lower) {
  std::optional<NumberConstraints::Bound> best;
  for (const auto& b : bounds) {
    const int o = best ? compare(b.value, best->value) : 0;
    if (!best || o == (lower ? 1 : -1) || (o == 0 && b.strict)) best = b;
  }
  return best;
}

}  // namespace

// With s the most fraction digits among the multiples, each m·10^s is an integer A, and
// v·10^s is a multiple of every A exactly when it is one of lcm(A) (v·10^s = k·A is an
// integer). The condition made from the result checks its own limits.
std::optional<Decimal> least_common_multiple(const std::vector<Decimal>& multiples) {
  using u128 = unsigned __int128;
  constexpr u128 kLimit = u128{10'000'000'000'000'000'000u};  // 10^19
  size_t scale = 0;
  for (const auto& m : multiples) scale = std::max(scale, m.frac_digits.size());
  u128 l = 1;
  for (const auto& m : multiples) {
    if (m.negative || m.is_zero()) return std::nullopt;
    u128 a = 0;
    const std::string digits = m.int_digits + m.frac_digits + std::string(scale - m.frac_digits.size(), '0');
    for (const char ch : digits) {
      a = a * 10 + static_cast<unsigned>(ch - '0');
      if (a >= kLimit) return std::nullopt;
    }
    u128 x = l, y = a;
    while (y != 0) x = std::exchange(y, x % y);
    l = l / x * a;  // l, a < 10^19: the product of l / gcd and a fits in 128 bits
    if (l >= kLimit) return std::nullopt;
  }
  std::string text;
  for (u128 v = l; v != 0; v /= 10) text.insert(text.begin(), static_cast<char>('0' + static_cast<unsigned>(v % 10)));
  if (text.size() <= scale) text.insert(0, scale - text.size() + 1, '0');
  Decimal d;
  d.int_digits = text.substr(0, text.size() - scale);
  d.frac_digits = text.substr(text.size() - scale);
  d.frac_digits.erase(d.frac_digits.find_last_not_of('0') + 1);
  return d;
}

NumberConstraints with_bounds_at_zero(const NumberConstraints& c) {
  NumberConstraints out;
  out.multiple_of = c.multiple_of;
  out.not_multiple_of = c.not_multiple_of;  // fewer values: a bound with no multiple between it and zero still has none
  out.integer = c.integer;
  std::optional<Decimal> step;  // the least positive value c admits, when there is one
  if (!c.multiple_of.empty() || c.integer) {
    std::vector<Decimal> multiples = c.multiple_of;
    if (c.integer) multiples.push_back(Decimal::parse("1"));
    step = least_common_multiple(multiples);
  }
  const Decimal zero;
  for (const bool lower : {true, false}) {
    const auto b = tightest(lower ? c.at_least : c.at_most, lower);
    if (!b) continue;
    NumberConstraints::Bound snapped = *b;
    if (step) {
      // Mirrored for an upper bound: v ≤ b is −v ≥ −b.
      Decimal v = b->value;
      v.negative = !v.is_zero() && (lower ? v.negative : !v.negative);
      Decimal minus_step = *step;
      minus_step.negative = true;
      const int to_zero = compare(v, zero), to_step = compare(v, *step), to_minus_step = compare(v, minus_step);
      // v ≥ x: the least multiple admitted is L for 0 < x ≤ L (strict: 0 ≤ x < L), 0 for
      // −L < x ≤ 0 (strict: −L ≤ x < 0).
      if (b->strict ? (to_zero >= 0 && to_step < 0) : (to_zero > 0 && to_step <= 0)) {
        snapped = {zero, true};
      } else if (b->strict ? (to_minus_step >= 0 && to_zero < 0) : (to_minus_step > 0 && to_zero <= 0)) {
        snapped = {zero, false};
      }
    }
    (lower ? out.at_least : out.at_most).push_back(snapped);
  }
  return out;
}

CharDfa numbers_satisfying(const NumberConstraints& given, bool exponents, size_t max_states) {
  const NumberConstraints c = with_bounds_at_zero(given);
  const int cap = exponents ? kExactScale : 0;
  Sides sides;
  if (const auto b = tightest(c.at_least, true)) sides.add_bound(b->value, true, b->strict, cap);
  if (const auto b = tightest(c.at_most, false)) sides.add_bound(b->value, false, b->strict, cap);
  // Each multiple once; "integer" unless a multiple of an integer implies it.
  std::vector<Decimal> multiples;
  for (const auto& m : c.multiple_of) {
    const bool seen = std::any_of(multiples.begin(), multiples.end(), [&](const Decimal& x) { return compare(x, m) == 0; });
    if (!seen) multiples.push_back(m);
  }
  const bool integral = std::any_of(multiples.begin(), multiples.end(), [](const Decimal& m) { return m.is_integer(); });
  if (c.integer && !integral) multiples.push_back(Decimal::parse("1"));
  auto condition = [&](const Decimal& m) -> std::unique_ptr<Condition> {
    if (exponents) return std::make_unique<Multiple>(m, cap, max_states);
    return std::make_unique<PlainMultiple>(m, max_states);
  };
  std::vector<std::unique_ptr<Condition>> conditions;
  // Several multiples are one (a walk over the tuple of their residues and scales costs far
  // more than one over the residue of their least common multiple), when it can be read and
  // its condition is within the limits; else each its own, with their own errors.
  if (multiples.size() > 1) {
    if (const auto l = least_common_multiple(multiples)) {
      try {
        conditions.push_back(condition(*l));
      } catch (const std::invalid_argument&) {
      }
    }
  }
  if (conditions.empty()) {
    for (const auto& m : multiples) conditions.push_back(condition(m));
  }
  // Each excluded multiple once, walked as a multiple with its verdicts flipped (within the
  // multiples' region).
  std::vector<Decimal> excluded;
  for (const auto& m : c.not_multiple_of) {
    const bool seen = std::any_of(excluded.begin(), excluded.end(), [&](const Decimal& x) { return compare(x, m) == 0; });
    if (seen) continue;
    excluded.push_back(m);
    if (exponents) conditions.push_back(std::make_unique<Multiple>(m, cap, max_states, true));
    else conditions.push_back(std::make_unique<PlainMultiple>(m, max_states, true));
  }
  for (auto& owned : conditions) {
    const Condition* x = sides.own(std::move(owned));
    sides.add(0, x);
    sides.add(1, x);
  }
  return build(sides, exponents, max_states);
}

const CharDfa& all_numbers() {
  static const CharDfa d = dfa_of(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
  return d;
}

const CharDfa& plain_numbers() {
  static const CharDfa d = dfa_of(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?)");
  return d;
}

const CharDfa& exact_numbers() { return region_numbers(true, true); }

const CharDfa& region_numbers(bool compare, bool multiple) {
  auto make = [](bool c, bool m) {
    const InRegion region(kExactScale, c, m);
    return number_automaton::build(&region, &region, true, kMaxNumberStates);
  };
  // Each made on first use: a walk of 1,700-2,900 states, about 0.8 ms, and a schema's
  // complements need one or two of the three.
  switch ((compare ? 1 : 0) | (multiple ? 2 : 0)) {
    case 0:
      return all_numbers();
    case 1: {
      static const CharDfa d = make(true, false);
      return d;
    }
    case 2: {
      static const CharDfa d = make(false, true);
      return d;
    }
    default: {
      static const CharDfa d = make(true, true);
      return d;
    }
  }
}

const CharDfa& integer_numbers() {
  static const CharDfa d = [] {
    NumberConstraints c;
    c.integer = true;
    return numbers_satisfying(c);
  }();
  return d;
}

const CharDfa& integer_numbers_without_fraction() {
  static const CharDfa d = dfa_of(R"(-?(0|[1-9][0-9]*))");
  return d;
}

CharDfa numbers_at_least(const Decimal& c, bool strict, bool exponents) {
  NumberConstraints n;
  n.at_least.push_back({c, strict});
  return numbers_satisfying(n, exponents);
}

CharDfa numbers_at_most(const Decimal& c, bool strict, bool exponents) {
  NumberConstraints n;
  n.at_most.push_back({c, strict});
  return numbers_satisfying(n, exponents);
}

CharDfa numbers_multiple_of(const Decimal& m, bool exponents, size_t max_states) {
  NumberConstraints n;
  n.multiple_of.push_back(m);
  return numbers_satisfying(n, exponents, max_states);
}

CharDfa numbers_equal(const Decimal& c) { return numbers_in({c}); }

namespace {
// Whether every value is an integer written with canonical digits (Decimal's contract).
bool integers_only(const std::vector<Decimal>& values) {
  return std::all_of(values.begin(), values.end(), [](const Decimal& v) {
    return v.is_integer() && !v.int_digits.empty() && (v.int_digits[0] != '0' || v.int_digits == "0");
  });
}

// The digit texts of integers: each one's, and "-0" for zero; sorted and distinct.
std::vector<std::string> integer_texts(const std::vector<Decimal>& values) {
  std::vector<std::string> texts;
  texts.reserve(values.size() + 1);
  for (const Decimal& v : values) {
    if (v.is_zero()) {
      texts.emplace_back("0");
      texts.emplace_back("-0");
    } else {
      texts.push_back(v.negative ? "-" + v.int_digits : v.int_digits);
    }
  }
  CharDfa::sort_words(texts);
  return texts;
}

// For integers only: whether the walk with exponents is sure to pass `max_states` before
// its tries are built. Its lower bound (EqualSet::exponent_walk_lower_bound, summed over the
// two sides of a group) counts, for each node but the root of a side's shared trie, at least
// max z + 1 ≥ kExactScale + 1 states. Nodes with equal walks have equal languages of
// significant digits, so a shared trie has at least as many nodes as the minimal automaton of
// its digit strings has states; and the first group (EqualSet::groups) holds every distinct
// digit string of its side. That automaton's size is counted without building it past what
// the decision needs (CharDfa::literal_states). `texts`: integer_texts(), whose sides'
// significant digits are read in order (dropping trailing zeros keeps sorted texts in
// order, ties adjacent), so nothing is sorted again.
bool integer_walk_over_budget(const std::vector<std::string>& texts, size_t max_states) {
  const size_t per_node = kExactScale + 1;
  const size_t cap = max_states / per_node + 1;  // more than cap nodes: over on their own
  std::vector<std::string> digits[2];            // nonnegative, negative
  for (const std::string& t : texts) {
    const bool negative = t[0] == '-';
    const std::string_view magnitude = std::string_view(t).substr(negative ? 1 : 0);
    if (magnitude == "0") continue;
    std::string d(magnitude.substr(0, magnitude.find_last_not_of('0') + 1));
    auto& side = digits[negative ? 1 : 0];
    if (side.empty() || side.back() != d) side.push_back(std::move(d));
  }
  size_t nodes = 0;  // a lower bound on the first group's shared nodes but the roots
  for (auto& side : digits) {
    const size_t states = CharDfa::literal_states(std::move(side), cap);
    nodes += states > 0 ? states - 1 : 0;
    if (nodes * per_node > max_states) return true;  // the other side need not be read
  }
  return false;
}

// The plain texts of integers (`texts`: integer_texts()), then optionally a fraction of
// zeros: the minimal automaton of the digit texts (CharDfa::sorted_literals) gets, from each
// final state, one shared tail ".0+"; the texts hold no '.', so it stays minimal (not
// minimized again: that took a fifth of a 50,000-value enum's compilation).
CharDfa plain_integer_texts(std::vector<std::string> texts) {
  std::vector<CharDfa::State> states = CharDfa::sorted_literals(std::move(texts)).states();
  const auto point = static_cast<uint32_t>(states.size()), zeros = point + 1;
  for (CharDfa::State& st : states) {
    if (!st.final) continue;
    // '.' sorts before the digits and after '-': first among a final state's edges.
    st.edges.insert(st.edges.begin(), CharDfa::Edge{'.', '.', point});
  }
  states.push_back(CharDfa::State{{CharDfa::Edge{'0', '0', zeros}}, false});
  states.push_back(CharDfa::State{{CharDfa::Edge{'0', '0', zeros}}, true});
  return CharDfa::from_states(std::move(states));
}
}  // namespace

CharDfa numbers_in(const std::vector<Decimal>& values, bool exponents, size_t max_states, std::optional<CharDfa>* plain) {
  const auto refuse = [&] {
    return std::invalid_argument(fmt::format("the enum's numbers need more than {} automaton states", max_states));
  };
  // A large set of integers: the refusal is known without the tries, and the plain texts
  // are their digits (the same language as the tries' walk without exponents).
  std::vector<std::string> texts;
  if (exponents && plain && integers_only(values) &&
      integer_walk_over_budget(texts = integer_texts(values), max_states)) {
    try {
      *plain = plain_integer_texts(std::move(texts));
    } catch (const AutomatonLimitError&) {
      // Left empty, as below: the caller's own walk of plain texts meets its limit.
    }
    throw refuse();
  }
  std::vector<Decimal> magnitudes[2];  // nonnegative, negative (zero in both)
  for (const auto& v : values) {
    if (v.is_zero() || !v.negative) magnitudes[0].push_back(v);
    if (v.is_zero() || v.negative) magnitudes[1].push_back(magnitude(v));
  }
  std::vector<std::vector<Decimal>> groups[2] = {EqualSet::groups(magnitudes[0]), EqualSet::groups(magnitudes[1])};
  // Each group's tries (nonnegative, negative) are made once: a walk with exponents that
  // must pass its budget is not tried (it would fail after max_states states of work), and
  // the plain texts asked for instead walk the same tries.
  std::vector<std::array<std::unique_ptr<EqualSet>, 2>> sides(std::max(groups[0].size(), groups[1].size()));
  bool over_budget = false;
  for (size_t g = 0; g < sides.size(); ++g) {
    size_t lower_bound = 0;
    for (int s = 0; s < 2; ++s) {
      if (g < groups[s].size() && !groups[s][g].empty()) {
        sides[g][s] = std::make_unique<EqualSet>(groups[s][g], exponents ? kExactScale : 0);
        lower_bound += exponents ? sides[g][s]->exponent_walk_lower_bound() : 0;
      }
    }
    over_budget = over_budget || lower_bound > max_states;
  }
  // The groups are walked together (number_conditions::AnyOf), up to eight at a time, with
  // the budget of as many walks: the union of one minimized automaton per group had to be
  // minimized again, and a dense enum's first group is tens of thousands of states.
  auto walk = [&](bool with_exponents, size_t budget) {
    if (sides.size() == 1) return number_automaton::build(sides[0][0].get(), sides[0][1].get(), with_exponents, budget);
    CharDfa out = CharDfa::none();
    for (size_t g = 0; g < sides.size(); g += AnyOf::kMaxParts) {
      const size_t end = std::min(sides.size(), g + AnyOf::kMaxParts);
      std::vector<const Condition*> parts[2];
      for (size_t i = g; i < end; ++i) {
        for (int s = 0; s < 2; ++s) {
          if (sides[i][s]) parts[s].push_back(sides[i][s].get());
        }
      }
      std::optional<AnyOf> any[2];
      for (int s = 0; s < 2; ++s) {
        if (!parts[s].empty()) any[s].emplace(std::move(parts[s]));
      }
      const size_t walks = end - g;
      CharDfa d = number_automaton::build(any[0] ? &*any[0] : nullptr, any[1] ? &*any[1] : nullptr, with_exponents,
                                          budget > SIZE_MAX / walks ? SIZE_MAX : budget * walks);
      out = g == 0 ? std::move(d) : CharDfa::unite(out, d);
    }
    return out;
  };
  if (over_budget) {
    if (plain) {
      for (auto& pair : sides) {
        for (auto& side : pair) {
          if (side) side->drop_exponents();
        }
      }
      try {
        *plain = walk(false, CharDfa::max_states());
      } catch (const std::length_error&) {
        // Left empty: the caller's own walk of plain texts meets the same limit and says so.
      }
    }
    throw refuse();
  }
  try {
    return walk(exponents, max_states);
  } catch (const std::length_error&) {
    throw refuse();
  }
}

const CharDfa& canonical_numbers() {
  static const CharDfa d = [] {
    // The shapes serializers write, then at most 17 significant digits, then no negative zero.
    const CharDfa shapes = dfa_of(R"(-?(0|[1-9][0-9]*)(\.0|\.[0-9]*[1-9])?|-?[1-9](\.[0-9]*[1-9])?[eE][+-]?(0?[1-9]|[1-9][0-9]|[12][0-9][0-9]|3[01][0-9]|32[0-4]))");
    const CharDfa digits = dfa_of(R"(-?[0.]*([1-9]\.?([0-9]\.?){0,16})?([eE][+-]?[0-9]+)?)");
    const CharDfa negative_zero = dfa_of(R"(-[0.]*)");
    return CharDfa::intersect(CharDfa::intersect(shapes, digits), negative_zero.complement());
  }();
  return d;
}

}  // namespace lockstep
