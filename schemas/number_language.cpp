// schemas/number_language.cpp — see number_language.h.
#include "schemas/number_language.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

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

CharDfa dfa_of(const std::string& regex) { return CharDfa::from_expr(regex_to_expr(regex)); }

CharDfa with_minus(const CharDfa& magnitudes) {
  return CharDfa::from_expr(
      Expr::sequence({Expr::literal("-"), automaton_expr(std::make_shared<CharDfa>(magnitudes), false)}));
}

const CharDfa& unsigned_numbers() {
  static const CharDfa d = dfa_of(R"((0|[1-9][0-9]*)(\.[0-9]+)?)");
  return d;
}

std::string digit_above(char c) { return c == '8' ? "9" : fmt::format("[{}-9]", static_cast<char>(c + 1)); }

// Unsigned texts whose value is ≥ m (> m when strict).
CharDfa magnitudes_at_least(const Decimal& m, bool strict) {
  const std::string& I = m.int_digits;
  const std::string& F = m.frac_digits;
  std::vector<std::string> alts;
  const std::string frac = R"((\.[0-9]+)?)";
  // Integer part above I.
  if (I == "0") {
    alts.push_back("[1-9][0-9]*" + frac);
  } else {
    alts.push_back(fmt::format("[1-9][0-9]{{{},}}", I.size()) + frac);  // more digits
    for (size_t k = 0; k < I.size(); ++k) {
      if (I[k] == '9') continue;
      const size_t rest = I.size() - k - 1;
      alts.push_back(I.substr(0, k) + digit_above(I[k]) + (rest ? fmt::format("[0-9]{{{}}}", rest) : "") + frac);
    }
  }
  // Integer part equal to I: compare the fractions.
  if (F.empty()) {
    alts.push_back(I + (strict ? R"(\.[0-9]*[1-9][0-9]*)" : frac));
  } else {
    for (size_t k = 0; k < F.size(); ++k) {
      if (F[k] == '9') continue;
      alts.push_back(I + "\\." + F.substr(0, k) + digit_above(F[k]) + "[0-9]*");
    }
    alts.push_back(I + "\\." + F + (strict ? "[0-9]*[1-9][0-9]*" : "[0-9]*"));
  }
  std::string regex;
  for (const auto& a : alts) regex += (regex.empty() ? "" : "|") + a;
  return CharDfa::intersect(dfa_of(regex), unsigned_numbers());
}

CharDfa magnitudes_at_most(const Decimal& m, bool strict) {
  return CharDfa::intersect(unsigned_numbers(), magnitudes_at_least(m, !strict).complement());
}

}  // namespace

const CharDfa& plain_numbers() {
  static const CharDfa d = dfa_of(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?)");
  return d;
}

const CharDfa& exponent_numbers() {
  static const CharDfa d = dfa_of(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?[eE][+-]?[0-9]+)");
  return d;
}

const CharDfa& integer_numbers() {
  static const CharDfa d = dfa_of(R"(-?(0|[1-9][0-9]*)(\.0+)?)");
  return d;
}

const CharDfa& integer_numbers_without_fraction() {
  static const CharDfa d = dfa_of(R"(-?(0|[1-9][0-9]*))");
  return d;
}

CharDfa numbers_at_least(const Decimal& c, bool strict) {
  Decimal mag = c;
  mag.negative = false;
  if (!c.negative) {
    CharDfa out = magnitudes_at_least(mag, strict);
    if (c.is_zero() && !strict) out = CharDfa::unite(out, dfa_of(R"(-0(\.0+)?)"));
    return out;
  }
  return CharDfa::unite(unsigned_numbers(), with_minus(magnitudes_at_most(mag, strict)));
}

CharDfa numbers_at_most(const Decimal& c, bool strict) {
  Decimal mag = c;
  mag.negative = false;
  if (c.negative) return with_minus(magnitudes_at_least(mag, strict));
  if (c.is_zero() && strict) return with_minus(magnitudes_at_least(mag, true));
  return CharDfa::unite(with_minus(unsigned_numbers()), magnitudes_at_most(mag, strict));
}

CharDfa numbers_multiple_of(const Decimal& m, size_t max_states) {
  if (m.negative || m.is_zero()) throw std::invalid_argument("multipleOf must be greater than 0");
  const std::string all = m.int_digits + m.frac_digits;
  const size_t k = m.frac_digits.size();
  const std::string mdigits = all.substr(std::min(all.find_first_not_of('0'), all.size() - 1));
  if (mdigits.size() > 9) throw std::invalid_argument(fmt::format("multipleOf {} has too many digits", m.to_string()));
  const uint64_t M = std::stoull(mdigits);
  if ((k + 3) * M + 3 > max_states) {
    throw std::invalid_argument(fmt::format("multipleOf {} needs more than {} automaton states", m.to_string(), max_states));
  }
  // States: 0 start, 1 after '-', 2 "0" integer part, then int(r), frac(i, r) for i in
  // 0..k, tail(r).
  const uint32_t kStart = 0, kSign = 1, kZero = 2;
  auto int_state = [&](uint64_t r) { return static_cast<uint32_t>(3 + r); };
  auto frac_state = [&](size_t i, uint64_t r) { return static_cast<uint32_t>(3 + M + i * M + r); };
  auto tail_state = [&](uint64_t r) { return static_cast<uint32_t>(3 + M + (k + 1) * M + r); };
  std::vector<CharDfa::State> st(3 + M + (k + 1) * M + M);
  uint64_t pow10k = 1 % M;
  for (size_t i = 0; i < k; ++i) pow10k = pow10k * 10 % M;
  auto digits_to = [&](std::vector<CharDfa::Edge>& edges, uint32_t lo, uint32_t hi, auto target_of) {
    for (uint32_t d = lo; d <= hi; ++d) edges.push_back({'0' + d, '0' + d, target_of(d)});
  };
  for (uint32_t s : {kStart, kSign}) {
    if (s == kStart) st[s].edges.push_back({'-', '-', kSign});
    st[s].edges.push_back({'0', '0', kZero});
    digits_to(st[s].edges, 1, 9, [&](uint32_t d) { return int_state(d % M); });
    std::sort(st[s].edges.begin(), st[s].edges.end(), [](const auto& a, const auto& b) { return a.lo < b.lo; });
  }
  st[kZero].final = true;
  st[kZero].edges.push_back({'.', '.', frac_state(0, 0)});
  for (uint64_t r = 0; r < M; ++r) {
    auto& s = st[int_state(r)];
    s.final = r * pow10k % M == 0;
    s.edges.push_back({'.', '.', frac_state(0, r)});
    digits_to(s.edges, 0, 9, [&](uint32_t d) { return int_state((r * 10 + d) % M); });
    for (size_t i = 0; i <= k; ++i) {
      auto& f = st[frac_state(i, r)];
      if (i > 0) {
        uint64_t scale = 1 % M;
        for (size_t j = i; j < k; ++j) scale = scale * 10 % M;
        f.final = r * scale % M == 0;
      }
      if (i < k) {
        digits_to(f.edges, 0, 9, [&](uint32_t d) { return frac_state(i + 1, (r * 10 + d) % M); });
      } else {
        f.edges.push_back({'0', '0', tail_state(r)});
      }
    }
    auto& t = st[tail_state(r)];
    t.final = r == 0;
    t.edges.push_back({'0', '0', tail_state(r)});
  }
  return CharDfa::from_states(std::move(st)).minimized();
}

}  // namespace lockstep
