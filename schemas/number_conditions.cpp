// schemas/number_conditions.cpp — mantissa walks for the number languages (number_conditions.h).
#include "schemas/number_conditions.h"

#include <algorithm>
#include <bit>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "grammar/hash.h"
#include "grammar/intern_table.h"

namespace lockstep::number_conditions {

using number_automaton::kMinusInfinity;
using number_automaton::kPlusInfinity;

// ---- ZeroMagnitude: state 1 once a non-zero digit was read.

uint64_t ZeroMagnitude::step(uint64_t s, char c) const {
  if (c >= '1' && c <= '9') return zero_ ? kReject : 1;
  return s;
}

Verdict ZeroMagnitude::end(uint64_t s) const { return (s == 0) == zero_ ? Verdict::all() : Verdict::none(); }

// ---- InRegion: bit 0 fraction, 1 outside, 2 non-zero read, 3 last digit zero, 4 non-zero
// in the fraction, bits 5..15 digits of this part (capped at cap + 1), 16.. trailing zeros of
// the integer part (capped at cap + 1).

uint64_t InRegion::step(uint64_t s, char c) const {
  uint64_t frac = s & 1, outside = s >> 1 & 1, nz = s >> 2 & 1, fnz = s >> 4 & 1, n = s >> 5 & 0x7FF, t = s >> 16;
  if (c == '.') return 1 | outside << 1 | nz << 2 | t << 16;
  const bool zero = c == '0';
  n = std::min(n, cap_) + 1;
  if (!frac) {
    t = zero ? std::min(t + 1, cap_ + 1) : 0;
    if (compare_ && nz && n > cap_) outside = 1;  // too many integer digits
  } else if (!zero && n > cap_) {
    // A non-zero fraction digit past the cap: the multiples' last non-zero position, or
    // (first significant digit after "0.") the comparisons' scale.
    if (multiple_ || (compare_ && !nz)) outside = 1;
  }
  nz |= !zero;
  if (frac) fnz |= !zero;
  return frac | outside << 1 | nz << 2 | static_cast<uint64_t>(zero) << 3 | fnz << 4 | n << 5 | t << 16;
}

Verdict InRegion::end(uint64_t s) const {
  const uint64_t frac = s & 1, outside = s >> 1 & 1, nz = s >> 2 & 1, last_zero = s >> 3 & 1, fnz = s >> 4 & 1;
  const uint64_t n = s >> 5 & 0x7FF, t = s >> 16;
  bool inside = !outside;
  if (multiple_) {
    // The fraction empty, exactly "0", or ending in a non-zero digit; without a non-zero
    // fraction digit, d = the integer part's trailing zeros within the cap.
    inside = inside && (!frac || !last_zero || (!fnz && n == 1));
    if (!fnz) inside = inside && t <= cap_;
  }
  return !nz || inside ? Verdict::all() : Verdict{true, 1, 0};
}

// ---- Compare. The walk tracks whether a non-zero digit was read, the scale p of the mantissa
// (its integer digits, or minus the zeros after "0." before the first significant digit),
// and the order of the significant digits read so far against C's: equal for k digits
// (0..|D|), below, above. State: bit 0 fraction, bit 1 started, bit 2 small (started in the
// fraction after "0."), bits 3..23 count (p, or the leading fraction zeros), bits 24.. order.

namespace {
uint64_t pack(uint64_t frac, uint64_t started, uint64_t small, uint64_t count, uint64_t order) {
  return frac | started << 1 | small << 2 | count << 3 | order << 24;
}
}  // namespace

Compare::Compare(const Decimal& c, Mode mode, int cap) : mode_(mode), cap_(cap) {
  if (c.int_digits != "0") {
    q_ = static_cast<int64_t>(c.int_digits.size());
    digits_ = c.int_digits + c.frac_digits;
  } else {
    const size_t nz = c.frac_digits.find_first_not_of('0');
    q_ = -static_cast<int64_t>(nz);
    digits_ = c.frac_digits.substr(nz);
  }
  digits_ = digits_.substr(0, digits_.find_last_not_of('0') + 1);
  // Past these scales the plain verdict is known (above or below C).
  max_p_ = std::max<int64_t>(cap, q_);
  max_z_ = std::max<int64_t>(cap, -q_);
  if (max_p_ > 1'000'000 || max_z_ > 1'000'000) throw std::invalid_argument("number constant out of range");
  below_ = digits_.size() + 1;
  above_ = digits_.size() + 2;
}

bool Compare::settled(uint64_t s) const {
  const uint64_t started = s >> 1 & 1, small = s >> 2 & 1, count = s >> 3 & 0x1FFFFF;
  return started && count > static_cast<uint64_t>(small ? max_z_ : max_p_);
}

uint64_t Compare::step(uint64_t s, char c) const {
  const uint64_t frac = s & 1, started = s >> 1 & 1, small = s >> 2 & 1, order = s >> 24;
  uint64_t count = s >> 3 & 0x1FFFFF;
  if (c == '.') return pack(1, started, small, count, order);
  const int x = c - '0';
  if (!started) {
    if (x == 0) return frac ? pack(1, 0, 0, std::min<uint64_t>(count + 1, max_z_ + 1), 0) : s;
    if (frac && count > static_cast<uint64_t>(max_z_)) {  // below C, settled
      return mode_ == kEq || mode_ == kGe || mode_ == kGt ? kReject : pack(1, 1, 1, count, 0);
    }
    return next(pack(frac, 1, frac, frac ? count : 1, 0), x);
  }
  if (settled(s)) return s;
  if (!frac) {
    ++count;
    if (count > static_cast<uint64_t>(max_p_)) {  // above C, settled
      return mode_ == kEq || mode_ == kLe || mode_ == kLt ? kReject : pack(0, 1, 0, count, 0);
    }
  }
  return next(pack(frac, 1, small, count, order), x);
}

uint64_t Compare::next(uint64_t s, int x) const {
  uint64_t order = s >> 24;
  if (order < digits_.size()) {
    const int d = digits_[order] - '0';
    order = x < d ? below_ : x > d ? above_ : order + 1;
  } else if (order == digits_.size() && x != 0) {
    order = above_;
  }
  if (mode_ == kEq && (order == below_ || order == above_)) return kReject;
  return (s & 0xFFFFFF) | order << 24;
}

Verdict Compare::end(uint64_t s) const {
  const uint64_t started = s >> 1 & 1, small = s >> 2 & 1, count = s >> 3 & 0x1FFFFF, order = s >> 24;
  const bool le = mode_ == kLe || mode_ == kLt, ge = mode_ == kGe || mode_ == kGt;
  if (!started) return le ? Verdict::all() : Verdict::none();  // the value is 0 < C
  if (settled(s)) return {small ? le : ge, 1, 0};
  const int64_t p = small ? -static_cast<int64_t>(count) : static_cast<int64_t>(count);
  const int rel = order == above_ ? 1 : order == digits_.size() ? 0 : -1;  // digits against C's
  const int64_t k = q_ - p;  // value ≥ C iff X > k, or X = k and the digits are ≥ C's
  int64_t lo = kMinusInfinity, hi = kPlusInfinity;
  switch (mode_) {
    case kGe: lo = k + (rel < 0); break;
    case kGt: lo = k + (rel <= 0); break;
    case kLe: hi = k - (rel > 0); break;
    case kLt: hi = k - (rel >= 0); break;
    case kEq:
      if (rel != 0) return Verdict::none();
      lo = hi = k;
      break;
  }
  Verdict v{lo <= 0 && 0 <= hi, lo, hi};
  if (p < -cap_ || p > cap_) v.lo = 1, v.hi = 0;  // beyond the cap: plain texts only
  return v;
}

Reach Compare::reach(uint64_t s) const {
  const uint64_t frac = s & 1, started = s >> 1 & 1, small = s >> 2 & 1, count = s >> 3 & 0x1FFFFF, order = s >> 24;
  const bool le = mode_ == kLe || mode_ == kLt;
  if (settled(s)) return {};
  if (!started) {
    // Zero, or a first significant digit at scale p ≤ -count: X ≥ q + count when C bounds below.
    if (le) return {};
    return {q_ + static_cast<int64_t>(frac ? count : 0), kPlusInfinity};
  }
  const int64_t p = small ? -static_cast<int64_t>(count) : static_cast<int64_t>(count);
  const int64_t k = q_ - p;  // in the integer part, each further digit lowers both bounds by one
  switch (mode_) {
    case kGe:
    case kGt: return {k + (frac && order == below_), kPlusInfinity};
    case kLe:
    case kLt: return {kMinusInfinity, k - (frac && order == above_)};
    case kEq: return {k, k};
  }
  return {};
}

bool Compare::fixed(uint64_t s, Verdict& v) const {
  const uint64_t frac = s & 1, started = s >> 1 & 1, order = s >> 24;
  // Settled past the scales, or in the fraction (the scale is final) with an order no digit
  // changes in a way that matters: below or above C, or equal so far where a later non-zero
  // digit (above) gives the same bound (minimum: X ≥ k either way; exclusiveMaximum: X ≤ k − 1).
  const bool final_order = order == below_ || order == above_ ||
                           (order == digits_.size() && (mode_ == kGe || mode_ == kLt));
  if (!settled(s) && !(started && frac && final_order)) return false;
  v = end(s);
  return true;
}

// ---- Multiple of m = M'·10^s, M' = 2^a·5^b·r: value N·10^(X−f) (N the mantissa's digits,
// N = N0·10^t, f fraction digits) is a multiple iff r | N0 and X ≥ s + δ − d, d = t − f,
// δ = max(0, a − v2(N0), b − v5(N0)). The walk tracks N mod r, N0 mod 2^a·5^b, the zeros
// since the last non-zero digit (up to a + b, for N0), and d: in the integer part its
// trailing zeros t; in the fraction, while it is "0", the same t; past a non-zero fraction
// digit at position R (d = −R) the position f of the last digit read, R itself only as far
// as plain texts need it (R > max(−s, 0): never a multiple). An exponent text is decided when
// its fraction is empty, exactly "0", or ends in a non-zero digit (then R = f): the exact
// region; other fractions with an exponent are rejected. State fields below.

// bit 0 fraction, 1 non-zero, 2 non-zero in the fraction, 3..17 N mod r, 18..32 N0 mod
// 2^a·5^b, 33..42 t, 43..52 f, 53..57 zeros since the last non-zero digit, 58..63 R (capped).
uint64_t Multiple::MState::pack() const {
  return frac | nz << 1 | fnz << 2 | nr << 3 | u << 18 | t << 33 | f << 43 | z << 53 | rs << 58;
}

Multiple::MState Multiple::MState::unpack(uint64_t k) {
  return {k & 1,           k >> 1 & 1,      k >> 2 & 1,     k >> 3 & 0x7FFF, k >> 18 & 0x7FFF,
          k >> 33 & 0x3FF, k >> 43 & 0x3FF, k >> 53 & 0x1F, k >> 58 & 0x3F};
}

Multiple::Multiple(const Decimal& m, int cap, size_t max_states, bool negated) : negated_(negated), cap_(cap) {
  if (m.negative || m.is_zero()) throw std::invalid_argument("multipleOf must be greater than 0");
  std::string all = m.int_digits + m.frac_digits;
  int64_t s = -static_cast<int64_t>(m.frac_digits.size());
  all = all.substr(std::min(all.find_first_not_of('0'), all.size() - 1));
  while (all.size() > 1 && all.back() == '0') all.pop_back(), ++s;
  if (all.size() > 18) throw std::invalid_argument(fmt::format("multipleOf {} has too many digits", m.to_string()));
  uint64_t r = std::stoull(all);
  while (r % 2 == 0) r /= 2, ++a_;
  while (r % 5 == 0) r /= 5, ++b_;
  r_ = r;
  for (int i = 0; i < a_; ++i) p_ *= 2;
  for (int i = 0; i < b_; ++i) p_ *= 5;
  if (r_ * p_ > max_states || r_ >= (1u << 15) || p_ >= (1u << 15) || a_ + b_ > 30) {
    throw std::invalid_argument(fmt::format("multipleOf {} needs more than {} automaton states", m.to_string(), max_states));
  }
  s_ = s;
  plain_r_ = std::max<int64_t>(-s, 0);
  max_t_ = std::max<int64_t>({cap, s + a_ + b_, a_ + b_, 0});
  plain_t_ = std::max<int64_t>({s + a_ + b_, a_ + b_, 0});
  max_f_ = std::max<int64_t>(cap, plain_r_);
  max_z_ = std::max(a_ + b_, 1);
  if (max_t_ > 1000 || max_f_ > 1000 || plain_r_ > 60) {
    throw std::invalid_argument(fmt::format("multipleOf {} is out of range", m.to_string()));
  }
  for (int i = 0; i <= a_ + b_ + 1; ++i) pow10_.push_back(i == 0 ? 1 % p_ : pow10_.back() * 10 % p_);
}

uint64_t Multiple::step(uint64_t key, char c) const {
  if (key == kPlainOnly) return key;
  MState s = MState::unpack(key);
  if (c == '.') {
    s.frac = 1;
    s.f = 0;
    // The zeros since the last non-zero digit go on counting: in the integer part z counts
    // them as t does (each capped), and before any non-zero digit nothing reads z.
    if (!s.nz) s.z = 0;
    return canonical(s).pack();
  }
  const uint64_t x = static_cast<uint64_t>(c - '0');
  s.nr = (s.nr * 10 + x) % r_;
  if (s.frac) s.f = std::min<uint64_t>(s.f + 1, max_f_ + 1);
  if (x == 0) {
    if (!s.frac) s.t = std::min<uint64_t>(s.t + 1, max_t_ + 1);
    if (s.frac && !s.fnz && s.f >= 2) s.t = std::min<uint64_t>(s.t, plain_t_ + 1);  // only plain texts need t now
    if (s.nz || s.frac) s.z = std::min<uint64_t>(s.z + 1, max_z_);
    return canonical(s).pack();
  }
  s.u = (s.u * pow10_[std::min<uint64_t>(s.z, a_ + b_) + 1] + x) % p_;
  s.nz = 1;
  s.z = 0;
  if (!s.frac) {
    s.t = 0;
  } else {
    if (s.f > static_cast<uint64_t>(max_f_)) return negated_ ? kPlainOnly : kReject;  // a non-zero digit past the cap
    s.fnz = 1;
    s.t = 0;
    s.rs = std::min<uint64_t>(s.f, plain_r_ + 1);
  }
  return canonical(s).pack();
}

// Drops what no verdict can tell apart: for plain texts alone (cap 0), the zeros since the
// last non-zero digit when N0's residue is not tracked, and the last non-zero position when
// δ is 0 (the walk rejects positions past −s, and every position up to it is a multiple's).
//
// And u once it is forgotten: with z + 1 ≥ a + b zeros since the last non-zero digit, the
// next non-zero digit multiplies u by 10^(z+1) ≡ 0 mod 2^a·5^b (one of a, b is 0), so only
// δ(u) can still matter (at the end), and any u with the same δ will do: 2^(a−δ) or 5^(b−δ),
// or 0 for δ = 0. Every such z steps alike too (end() and reach() tell only z = 0 apart).
// Multiples of 2.5 walked 5,843 states for a 383-state automaton, mostly these copies.
Multiple::MState Multiple::canonical(MState s) const {
  if (cap_ == 0 && p_ == 1) s.z = 0;
  if (cap_ == 0 && a_ + b_ == 0) s.rs = 0;
  // And t while N mod r is not 0: only a non-zero digit can make it 0 (10 is invertible mod
  // r), and that digit sets t to 0; until then every verdict is none, and reach() with t = 0
  // still bounds every accepted continuation (it begins past that digit). Negated, every
  // verdict is then all, t unread too.
  if (s.nr != 0) s.t = 0;
  if (p_ > 1 && s.z + 1 >= static_cast<uint64_t>(a_ + b_)) {
    const int64_t d = delta(s.u);
    uint64_t u = 0;
    if (d > 0) {
      u = 1;
      for (int64_t i = 0; i < a_ + b_ - d; ++i) u *= a_ > 0 ? 2 : 5;
    }
    s.u = u;
    s.z = std::min<uint64_t>(s.z, static_cast<uint64_t>(std::max(a_ + b_ - 1, 1)));
  } else if (p_ > 1) {
    // Fewer zeros: the next non-zero digit multiplies u by 10^(z+1), so it reads u modulo
    // q^k alone, k = a + b − z − 1 (q the prime of 2^a·5^b), and the end reads δ(u). Both
    // are kept by w = u mod q^k when w ≠ 0 (then v_q(u) = v_q(w) < k), else by q^v_q(u)
    // (0 for u = 0). Multiples of 17.5 walked 5,737 states for a 490-state automaton, most
    // of them residues of N0 modulo 25 that only differ modulo 5.
    const uint64_t q = a_ > 0 ? 2 : 5;
    uint64_t qk = 1;
    for (uint64_t i = s.z + 1; i < static_cast<uint64_t>(a_ + b_); ++i) qk *= q;
    if (const uint64_t w = s.u % qk; w != 0) {
      s.u = w;
    } else if (s.u != 0) {
      uint64_t v = 1;
      while (s.u % (v * q) == 0) v *= q;
      s.u = v;
    }
  }
  return s;
}

int64_t Multiple::delta(uint64_t u) const {
  if (u == 0) return 0;  // N0 ≡ 0 mod 2^a·5^b
  if (a_ > 0) return a_ - std::min<int64_t>(a_, std::countr_zero(u));
  int v5 = 0;
  for (; u % 5 == 0 && v5 < b_; u /= 5) ++v5;
  return b_ - v5;
}

Verdict Multiple::end(uint64_t key) const {
  if (key == kPlainOnly) return {true, 1, 0};
  const MState s = MState::unpack(key);
  const Verdict v = multiples_end(s);
  if (!negated_) return v;
  if (!s.nz) return Verdict::none();
  // With N mod r ≠ 0 no exponent makes a multiple (r is prime to 10): every text, also outside
  // the region (sound, and t need not be kept). Else the complement within the region: the
  // plain text's verdict flipped; with an exponent, inside the region (a fraction empty,
  // exactly "0", or ending in a non-zero digit at most cap places after the point; else at
  // most cap trailing zeros of the integer part) the exponents below the multiples' X ≥ k.
  if (s.nr != 0) return Verdict::all();
  const bool inside = !s.fnz ? (!s.frac || s.f == 1) && s.t <= static_cast<uint64_t>(cap_)
                             : s.z == 0 && s.f <= static_cast<uint64_t>(cap_);
  if (!inside) return {!v.plain, 1, 0};
  if (v.lo > v.hi) return {!v.plain, kMinusInfinity, kPlusInfinity};
  return {!v.plain, kMinusInfinity, v.lo - 1};  // the multiples' exponents are [k, +inf)
}

Verdict Multiple::multiples_end(const MState& s) const {
  if (!s.nz) return Verdict::all();  // zero is a multiple of everything
  if (s.nr != 0) return Verdict::none();
  const int64_t delta = this->delta(s.u);
  int64_t d = 0;
  bool exponent = true;
  if (!s.fnz) {
    // d = t: the integer part's trailing zeros (fraction empty or all zeros).
    if (s.t > static_cast<uint64_t>(s.frac && s.f >= 2 ? plain_t_ : max_t_)) return {true, 1, 0};  // d ≥ s + δ
    d = static_cast<int64_t>(s.t);
    exponent = !s.frac || s.f == 1;
  } else if (s.z == 0) {
    d = -static_cast<int64_t>(s.f);  // the fraction ends in its last non-zero digit
  } else {
    if (s.rs > static_cast<uint64_t>(plain_r_)) return Verdict::none();
    d = -static_cast<int64_t>(s.rs);
    exponent = false;
  }
  const int64_t k = s_ + delta - d;  // a multiple iff X ≥ k
  Verdict v{k <= 0, k, kPlusInfinity};
  if (!exponent || d < -cap_ || d > cap_) v.lo = 1, v.hi = 0;  // outside the exact region: plain texts only
  return v;
}

Reach Multiple::reach(uint64_t key) const {
  if (negated_) return {};
  const MState s = MState::unpack(key);
  if (!s.nz) return {};  // may stay zero
  // Every continuation has d ≤ t + k (k more integer digits), or, past a non-zero fraction
  // digit, d ≤ −R; δ ≥ 0.
  if (s.fnz) return {s_ + static_cast<int64_t>(s.z == 0 ? s.f : s.rs), kPlusInfinity};
  if (s.t > static_cast<uint64_t>(s.frac && s.f >= 2 ? plain_t_ : max_t_)) return {};
  return {s_ - static_cast<int64_t>(s.t), kPlusInfinity};
}

// ---- PlainMultiple. State: bit 0 fraction, bits 1..20 fraction digits read (capped at
// k + 1: past k only zeros), bits 21.. N mod M.

PlainMultiple::PlainMultiple(const Decimal& m, size_t max_states, bool negated) : negated_(negated) {
  if (m.negative || m.is_zero()) throw std::invalid_argument("multipleOf must be greater than 0");
  std::string all = m.int_digits + m.frac_digits;
  all = all.substr(std::min(all.find_first_not_of('0'), all.size() - 1));
  k_ = m.frac_digits.size();
  if (all.size() > 18 || k_ > 1000) throw std::invalid_argument(fmt::format("multipleOf {} has too many digits", m.to_string()));
  m_ = std::stoull(all);
  if (m_ > max_states || (k_ + 2) * m_ > max_states) {
    throw std::invalid_argument(fmt::format("multipleOf {} needs more than {} automaton states", m.to_string(), max_states));
  }
  scale_.assign(k_ + 1, 1 % m_);
  for (uint64_t i = k_; i-- > 0;) scale_[i] = scale_[i + 1] * 10 % m_;
}

uint64_t PlainMultiple::step(uint64_t s, char c) const {
  if (s == kNoMultiple) return s;
  const uint64_t frac = s & 1, i = s >> 1 & 0xFFFFF, r = s >> 21;
  if (c == '.') return s | 1;
  const uint64_t x = static_cast<uint64_t>(c - '0');
  if (!frac) return (r * 10 + x) % m_ << 21;
  if (i >= k_) return x == 0 ? s : negated_ ? kNoMultiple : kReject;  // a non-zero digit past m's last: never a multiple
  return 1 | (i + 1) << 1 | (r * 10 + x) % m_ << 21;
}

Verdict PlainMultiple::end(uint64_t s) const {
  if (s == kNoMultiple) return {true, 1, 0};
  const uint64_t i = s >> 1 & 0xFFFFF, r = s >> 21;
  return {(r * scale_[std::min(i, k_)] % m_ == 0) != negated_, 1, 0};
}

// ---- EqualSet. State: bit 0 fraction, 1 started, 2 small (started after "0."), 3 off the
// trie (zeros past a constant's digits), bits 4..24 count (p, or the leading fraction zeros),
// bits 25.. trie node.

namespace {
void significant(const Decimal& c, std::string& digits, int64_t& q) {
  if (c.int_digits != "0") {
    q = static_cast<int64_t>(c.int_digits.size());
    digits.assign(c.int_digits).append(c.frac_digits);
  } else {
    const size_t nz = c.frac_digits.find_first_not_of('0');
    q = -static_cast<int64_t>(nz);
    digits.assign(c.frac_digits, nz);
  }
  digits.resize(digits.find_last_not_of('0') + 1);
}

uint64_t eq_pack(uint64_t frac, uint64_t started, uint64_t small, uint64_t off, uint64_t count, uint64_t node) {
  return frac | started << 1 | small << 2 | off << 3 | count << 4 | node << 25;
}
}  // namespace

EqualSet::EqualSet(const std::vector<Decimal>& magnitudes, int cap) : cap_(cap) {
  Node root{};
  std::fill(root.child, root.child + 10, -1);
  root.stripped = 0;
  // At most a node per digit: reserved, so the trie of a 50,000-value enum (88-byte nodes,
  // up to one per digit) is not copied as it grows; that took 4-5% of its schema compilation.
  size_t digits_total = 1;
  for (const auto& c : magnitudes) digits_total += c.int_digits.size() + c.frac_digits.size();
  trie_.reserve(digits_total);
  trie_.push_back(root);
  int64_t max_q = INT64_MIN, min_q = INT64_MAX;
  std::string digits;
  for (const auto& c : magnitudes) {
    if (c.is_zero()) {
      zero_ = true;
      continue;
    }
    int64_t q = 0;
    significant(c, digits, q);
    int node = 0;
    for (char ch : digits) {
      const int x = ch - '0';
      if (trie_[node].child[x] < 0) {
        Node n{};
        std::fill(n.child, n.child + 10, -1);
        n.stripped = x == 0 ? trie_[node].stripped : static_cast<int>(trie_.size());
        n.depth = trie_[node].depth + 1;
        trie_[node].child[x] = static_cast<int>(trie_.size());
        trie_.push_back(n);
      }
      node = trie_[node].child[x];
    }
    Node& n = trie_[node];
    const bool first = n.q_lo > n.q_hi;
    n.q_lo = first ? q : std::min(n.q_lo, q);
    n.q_hi = first ? q : std::max(n.q_hi, q);
    max_q = std::max(max_q, q);
    min_q = std::min(min_q, q);
  }
  // Children come after their parent: one backward pass gives the subtrees' scales.
  for (size_t i = trie_.size(); i-- > 0;) {
    Node& n = trie_[i];
    if (n.q_lo <= n.q_hi) n.sub_lo = std::min(n.sub_lo, n.q_lo), n.sub_hi = std::max(n.sub_hi, n.q_hi);
    for (int c : n.child) {
      if (c >= 0) n.sub_lo = std::min(n.sub_lo, trie_[c].sub_lo), n.sub_hi = std::max(n.sub_hi, trie_[c].sub_hi);
    }
  }
  share_subtries();
  top_q_ = max_q == INT64_MIN ? 0 : max_q;
  bottom_z_ = min_q == INT64_MAX ? 0 : -min_q;
  max_p_ = std::max<int64_t>(cap, top_q_);
  max_z_ = std::max<int64_t>(cap, bottom_z_);
  if (max_p_ > 1'000'000 || max_z_ > 1'000'000 || trie_.size() >= (1u << 30)) {
    throw std::invalid_argument("number constant out of range");
  }
}

// Nodes whose walks behave alike become one: the same own scales, the same scales at their
// stripped node (where zeros past the trie lead), the same children. The walk reads only
// those, so the trie turns into a DAG of its distinct subtries (as a DAWG shares suffixes)
// and the walk's states, keyed by node, shrink with it: a dense set of integers repeats its
// last digits' subtries under most prefixes. Children follow their parent in trie_, so one
// backward pass sees every child's class before its parent's.
void EqualSet::share_subtries() {
  struct Shape {
    int64_t own_lo, own_hi, stripped_lo, stripped_hi;
    int child[10];
    bool operator==(const Shape& o) const {
      return own_lo == o.own_lo && own_hi == o.own_hi && stripped_lo == o.stripped_lo && stripped_hi == o.stripped_hi &&
             std::equal(child, child + 10, o.child);
    }
  };
  struct ShapeHash {
    uint64_t operator()(const Shape& k) const {
      uint64_t h = kFnvOffsetBasis;
      for (int64_t v : {k.own_lo, k.own_hi, k.stripped_lo, k.stripped_hi}) h = fnv1a_step(h, static_cast<uint64_t>(v));
      for (int c : k.child) h = fnv1a_step(h, static_cast<uint64_t>(static_cast<int64_t>(c)));
      return fmix64(h);
    }
  };
  auto scales = [](const Node& n) { return n.q_lo <= n.q_hi ? std::pair{n.q_lo, n.q_hi} : std::pair<int64_t, int64_t>{1, 0}; };
  std::vector<int> rep(trie_.size());
  // The distinct shapes, numbered as met, and the node standing for each (the first met).
  InternTable<Shape, ShapeHash> classes(trie_.size());
  std::vector<int> node_of_class;
  std::map<std::pair<int64_t, int64_t>, int> off_nodes;  // stripped nodes by their scales
  for (size_t i = trie_.size(); i-- > 0;) {
    const Node& n = trie_[i];
    if (n.stripped == static_cast<int>(i)) off_nodes.try_emplace(scales(n), static_cast<int>(i));
    Shape k{};
    std::tie(k.own_lo, k.own_hi) = scales(n);
    std::tie(k.stripped_lo, k.stripped_hi) = scales(trie_[static_cast<size_t>(n.stripped)]);
    for (int x = 0; x < 10; ++x) k.child[x] = n.child[x] < 0 ? -1 : rep[static_cast<size_t>(n.child[x])];
    if (i == 0) continue;  // the root stands for itself (rep[0] == 0)
    const auto [c, fresh] = classes.intern(k);
    if (fresh) node_of_class.push_back(static_cast<int>(i));
    rep[i] = node_of_class[c];
  }
  // Every edge now leads to a larger index, so a forward pass from the root reaches the
  // shared nodes in order; depth becomes the longest path (exponent_walk_lower_bound).
  std::vector<bool> reached(trie_.size(), false);
  reached[0] = true;
  for (size_t i = 0; i < trie_.size(); ++i) {
    Node& n = trie_[i];
    n.stripped = off_nodes.at(scales(trie_[static_cast<size_t>(n.stripped)]));
    if (!reached[i]) continue;
    for (int& c : n.child) {
      if (c < 0) continue;
      c = rep[static_cast<size_t>(c)];
      if (!reached[static_cast<size_t>(c)]) reached[static_cast<size_t>(c)] = true, trie_[static_cast<size_t>(c)].depth = 0;
      trie_[static_cast<size_t>(c)].depth = std::max(trie_[static_cast<size_t>(c)].depth, n.depth + 1);
    }
  }
  for (size_t i = 0; i < trie_.size(); ++i) trie_[i].shared = reached[i];
}

std::vector<std::vector<Decimal>> EqualSet::groups(const std::vector<Decimal>& magnitudes) {
  // Constants with the same digits go to groups by their runs of consecutive scales: the
  // constants are gathered by digit string in a hash table (in order of first appearance),
  // and only a digit string with several scales is sorted, each run counting its gaps.
  // Sorting every constant by its digits cost a 50,000-value enum a third of its walk.
  struct Entry {
    int64_t q;
    const Decimal* c;
  };
  std::vector<std::vector<Decimal>> out(1);
  std::unordered_map<std::string, uint32_t> list_of;  // digits → index in lists
  list_of.reserve(magnitudes.size());
  std::vector<std::vector<Entry>> lists;
  std::string digits;
  for (const auto& c : magnitudes) {
    if (c.is_zero()) {
      out[0].push_back(c);
      continue;
    }
    int64_t q = 0;
    significant(c, digits, q);
    const auto [it, fresh] = list_of.try_emplace(digits, static_cast<uint32_t>(lists.size()));
    if (fresh) lists.emplace_back();
    lists[it->second].push_back({q, &c});
  }
  for (auto& list : lists) {
    if (list.size() > 1) {
      std::sort(list.begin(), list.end(), [](const Entry& x, const Entry& y) { return x.q < y.q; });
    }
    size_t run = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      if (i > 0 && list[i].q == list[i - 1].q) continue;  // the same value twice
      run = i == 0 ? 0 : list[i].q != list[i - 1].q + 1 ? run + 1 : run;
      if (out.size() <= run) out.emplace_back();
      out[run].push_back(*list[i].c);
    }
  }
  return out;
}

void EqualSet::drop_exponents() {
  cap_ = 0;
  max_p_ = std::max<int64_t>(0, top_q_);
  max_z_ = std::max<int64_t>(0, bottom_z_);
}

size_t EqualSet::exponent_walk_lower_bound() const {
  size_t n = 0;
  for (size_t i = 1; i < trie_.size(); ++i) {
    if (trie_[i].shared) n += static_cast<size_t>(std::min<int64_t>(trie_[i].depth, max_p_) + max_z_ + 1);
  }
  return n;
}

// Plain texts only: can a constant's plain text still be completed from `s`? Its digits
// D and scale q: in the integer part after p digits, the text D…D[q-1] then '.' or zeros
// needs q ≥ p; in the fraction part (p fixed) q = p. The constants reachable are those
// below the node and, through trailing zeros, those of its stripped node. Subtrees are
// tested by their scales' interval: sound (never drops a live state), and tight for
// constants of one scale. Dead states would be minimized away; dropping them early keeps
// the walk near the trie's size instead of trie × point positions × zeros.
bool EqualSet::plain_live(uint64_t s) const {
  const uint64_t frac = s & 1, started = s >> 1 & 1, small = s >> 2 & 1, off = s >> 3 & 1;
  const uint64_t count = s >> 4 & 0x1FFFFF, node = s >> 25;
  if (!started) return true;
  const int64_t p = small ? -static_cast<int64_t>(count) : static_cast<int64_t>(count);
  const Node& n = trie_[node];
  const Node& st = trie_[static_cast<size_t>(n.stripped)];  // n itself when off the trie
  const bool own = st.q_lo <= st.q_hi;
  if (frac) return (own && st.q_lo <= p && p <= st.q_hi) || (!off && n.sub_lo <= p && p <= n.sub_hi);
  return (own && st.q_hi >= p) || (!off && n.sub_hi >= p && n.sub_lo <= n.sub_hi);
}

uint64_t EqualSet::step(uint64_t s, char c) const {
  if (cap_ == 0) {
    const uint64_t t = walk(s, c);
    return t == kReject || plain_live(t) ? t : kReject;
  }
  return walk(s, c);
}

uint64_t EqualSet::walk(uint64_t s, char c) const {
  const uint64_t frac = s & 1, started = s >> 1 & 1, small = s >> 2 & 1, off = s >> 3 & 1;
  uint64_t count = s >> 4 & 0x1FFFFF, node = s >> 25;
  if (c == '.') return s | 1;
  const int x = c - '0';
  if (!started) {
    if (x == 0) return frac ? eq_pack(1, 0, 0, 0, std::min<uint64_t>(count + 1, max_z_ + 1), 0) : s;
    if (frac && count > static_cast<uint64_t>(max_z_)) return kReject;  // below every constant
    const int child = trie_[0].child[x];
    if (child < 0) return kReject;
    return eq_pack(frac, 1, frac, 0, frac ? count : 1, static_cast<uint64_t>(child));
  }
  if (!frac && ++count > static_cast<uint64_t>(max_p_)) return kReject;  // above every constant
  if (off) return x == 0 ? eq_pack(frac, 1, small, 1, count, node) : kReject;
  const int child = trie_[node].child[x];
  if (child >= 0) return eq_pack(frac, 1, small, 0, count, static_cast<uint64_t>(child));
  if (x != 0) return kReject;
  return eq_pack(frac, 1, small, 1, count, static_cast<uint64_t>(trie_[node].stripped));
}

Verdict EqualSet::end(uint64_t s) const {
  const uint64_t started = s >> 1 & 1, small = s >> 2 & 1, off = s >> 3 & 1, count = s >> 4 & 0x1FFFFF, node = s >> 25;
  if (!started) return zero_ ? Verdict::all() : Verdict::none();
  const Node& n = trie_[off ? node : static_cast<uint64_t>(trie_[node].stripped)];
  if (n.q_lo > n.q_hi) return Verdict::none();
  const int64_t p = small ? -static_cast<int64_t>(count) : static_cast<int64_t>(count);
  Verdict v{n.q_lo - p <= 0 && 0 <= n.q_hi - p, n.q_lo - p, n.q_hi - p};
  if (p < -cap_ || p > cap_) v.lo = 1, v.hi = 0;  // beyond the cap: plain texts only
  return v;
}

// ---- Conjunction

Conjunction::Conjunction(std::vector<const Condition*> parts)
    : parts_(std::move(parts)),
      part_keys_(parts_.size()),
      part_steps_(parts_.size()),
      part_lookups_(parts_.size(), 0),
      part_memo_(parts_.size(), 0) {
  if (parts_.size() < 2 || parts_.size() > kMaxParts) throw std::logic_error("a conjunction has 2 to 4 parts");
  for (size_t i = 0; i < parts_.size(); ++i) part_memo_[i] = parts_[i]->costly_steps() ? 1 : 0;
}

uint64_t Conjunction::PartKeyHash::operator()(const PartKey& k) const {
  return fmix64(k.state * 0x9E3779B97F4A7C15ull + static_cast<uint8_t>(k.c));
}

Conjunction::PartStep Conjunction::compute_step(size_t i, uint64_t state, char c) const {
  PartStep p{parts_[i]->step(state, c), false, {}, {}};
  if (p.next != kReject) {
    p.fixed = parts_[i]->fixed(p.next, p.verdict);
    if (!p.fixed) p.reach = parts_[i]->reach(p.next);
  }
  return p;
}

Conjunction::PartStep Conjunction::part_step(size_t i, uint64_t state, char c) const {
  if (!part_memo_[i]) return compute_step(i, state, c);
  const auto [n, fresh] = part_keys_[i].intern({state, c});
  if (fresh) part_steps_[i].push_back(compute_step(i, state, c));
  if (part_lookups_[i] < kProbeSteps && ++part_lookups_[i] == kProbeSteps && 2 * part_keys_[i].size() > kProbeSteps) {
    part_memo_[i] = 0;  // mostly new steps: memoizing costs more than it saves
    part_keys_[i] = InternTable<PartKey, PartKeyHash>();
    part_steps_[i] = {};
    return compute_step(i, state, c);
  }
  return part_steps_[i][n];
}

bool Conjunction::Tuple::operator==(const Tuple& o) const {
  return std::equal(part, part + kMaxParts, o.part) && lo == o.lo && hi == o.hi && plain == o.plain &&
         frac == o.frac;
}

uint64_t Conjunction::TupleHash::operator()(const Tuple& t) const {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(t.plain) ^ static_cast<uint64_t>(t.frac) << 1;
  for (uint64_t x : t.part) h = (h ^ x) * 0x100000001B3ull + (h >> 29);
  h = (h ^ static_cast<uint64_t>(t.lo)) * 0x100000001B3ull + (h >> 29);
  h = (h ^ static_cast<uint64_t>(t.hi)) * 0x100000001B3ull + (h >> 29);
  return fmix64(h);  // InternTable takes the slot from the high bits
}

uint64_t Conjunction::intern(const Tuple& t) const {
  return tuples_.intern(t).first;
}

uint64_t Conjunction::start() const {
  Tuple t;
  for (size_t i = 0; i < parts_.size(); ++i) t.part[i] = parts_[i]->start();
  return intern(t);
}

Reach Conjunction::reach(const Tuple& t) const {
  Reach r;
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (t.part[i] == kFolded) continue;
    const Reach p = parts_[i]->reach(t.part[i]);
    r.a = std::max(r.a, p.a);
    r.b = std::min(r.b, p.b);
  }
  return r;
}

uint64_t Conjunction::step(uint64_t s, char c) const {
  Tuple t = tuples_.key(static_cast<uint32_t>(s));
  if (c == '.') t.frac = true;
  bool folded = false;
  Reach r;  // reach(t) of the tuple reached, from its parts that stay
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (t.part[i] == kFolded) continue;
    const PartStep p = part_step(i, t.part[i], c);
    t.part[i] = p.next;
    if (t.part[i] == kReject) return kReject;
    if (p.fixed) {
      t.plain = t.plain && p.verdict.plain;
      t.lo = std::max(t.lo, p.verdict.lo);
      t.hi = std::min(t.hi, p.verdict.hi);
      t.part[i] = kFolded;
      folded = true;
    } else {
      r.a = std::max(r.a, p.reach.a);
      r.b = std::min(r.b, p.reach.b);
    }
  }
  if (!t.plain && t.lo > t.hi) return kReject;  // a folded part accepts nothing
  if (t.frac) {
    // In the fraction no integer digit follows: the bounds hold as they are.
    const bool pure = t.plain == (t.lo <= 0 && 0 <= t.hi);
    // Dead when the fixed verdict's exponents ([lo, hi], and 0 if plain) miss [r.a, r.b].
    const bool zero_ok = t.plain && r.a <= 0 && 0 <= r.b;
    if (std::max(r.a, t.lo) > std::min(r.b, t.hi) && !zero_ok) return kReject;
    if (folded || pure) {
      // A fixed interval the other parts imply adds nothing: drop it.
      const bool any = std::any_of(t.part, t.part + parts_.size(), [](uint64_t x) { return x != kFolded; });
      if (pure && any && t.lo <= r.a && r.b <= t.hi) {
        t.lo = number_automaton::kMinusInfinity;
        t.hi = number_automaton::kPlusInfinity;
        t.plain = true;
      }
    }
  } else if (r.a > r.b) {
    return kReject;  // the parts accept no common exponent, whatever follows
  }
  return intern(t);
}

Verdict Conjunction::end(uint64_t s) const {
  const Tuple& t = tuples_.key(static_cast<uint32_t>(s));
  Verdict v{t.plain, t.lo, t.hi};
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (t.part[i] == kFolded) continue;
    const Verdict p = parts_[i]->end(t.part[i]);
    v.plain = v.plain && p.plain;
    v.lo = std::max(v.lo, p.lo);
    v.hi = std::min(v.hi, p.hi);
  }
  return v;
}

Reach Conjunction::reach(uint64_t s) const {
  const Tuple& t = tuples_.key(static_cast<uint32_t>(s));
  Reach r = reach(t);
  if (t.frac) r.a = std::max(r.a, t.lo), r.b = std::min(r.b, t.hi);
  return r;
}

// ---- AnyOf

AnyOf::AnyOf(std::vector<const Condition*> parts) : parts_(std::move(parts)) {
  if (parts_.empty() || parts_.size() > kMaxParts) throw std::logic_error("a union has 1 to 8 parts");
}

uint64_t AnyOf::TupleHash::operator()(const Tuple& t) const {
  uint64_t h = kFnvOffsetBasis;
  for (uint64_t x : t.part) h = fnv1a_step(h, x);
  return fmix64(h);  // InternTable takes the slot from the high bits
}

uint64_t AnyOf::start() const {
  Tuple t;
  for (size_t i = 0; i < parts_.size(); ++i) t.part[i] = parts_[i]->start();
  return tuples_.intern(t).first;
}

uint64_t AnyOf::step(uint64_t s, char c) const {
  Tuple t = tuples_.key(static_cast<uint32_t>(s));
  bool any = false;
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (t.part[i] == kReject) continue;
    t.part[i] = parts_[i]->step(t.part[i], c);
    any = any || t.part[i] != kReject;
  }
  return any ? tuples_.intern(t).first : kReject;
}

Verdict AnyOf::end(uint64_t s) const {
  const Tuple& t = tuples_.key(static_cast<uint32_t>(s));
  bool plain = false;
  for (size_t i = 0; i < parts_.size() && !plain; ++i) plain = t.part[i] != kReject && parts_[i]->end(t.part[i]).plain;
  return {plain, 1, 0};
}

bool AnyOf::intervals(uint64_t s, std::vector<std::pair<int64_t, int64_t>>& out) const {
  const Tuple& t = tuples_.key(static_cast<uint32_t>(s));
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (t.part[i] == kReject) continue;
    const Verdict v = parts_[i]->end(t.part[i]);
    if (v.lo <= v.hi) out.emplace_back(v.lo, v.hi);
  }
  return true;
}

}  // namespace lockstep::number_conditions
